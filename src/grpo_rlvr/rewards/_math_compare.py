"""Number equality for math-verify, installed in the ``_math_worker`` process: rationals exactly, floats
relatively, never with an absolute tolerance.

Stock math-verify (0.9) rounds floats to 6 decimal places (0.0000001 == 0.0000002) and compares other numbers
with ``evalf(chop=True)``, which drops differences below about 1e-15 (so 1/2^99 == 1/2^98). Here, replacing
``math_verify.grader.sympy_numeric_eq`` (the one place numbers are compared, also inside sets, intervals,
tuples, matrices and equations, whose semantics stay):

- integers and rationals are equal only when equal (9% == 9 stays, as in math-verify);
- exact irrational values (``\\sqrt{2}/2``, ``\\pi``) are equal when they agree to 50 significant digits;
- when either side is a float, ``|a - b| <= min(rel_tol * max(|a|, |b|), half a unit in the last written digit
  of each float)``, computed exactly (``rel_tol`` 1e-6 by default: 0.333333 counts for 1/3, 0.3333 does not, and
  1000001.0 does not count for 1000000); 0 equals only 0; with ``approximate_fractions`` off, a float never
  counts for a rational it does not equal exactly (0.3333333 is not 1/3, 0.5 is 1/2);
- expressions with symbols are equal when their difference evaluates to exactly 0 (symbolic equality is
  math-verify's own next check).
"""

from __future__ import annotations

REL_TOL = 1e-6


def _exact(x):
    """A real number as an exact Rational: a float by its decimal digits, an irrational to 60 digits."""
    from sympy import Float, Rational

    if isinstance(x, Rational):
        return x
    if isinstance(x, Float):
        return Rational(str(x))
    return Rational(str(x.evalf(60)))


def _half_ulp(x):
    """Half a unit in the last significant digit of a float (0.333333 -> 5e-7)."""
    from decimal import Decimal

    from sympy import Rational

    exp = Decimal(str(x)).normalize().as_tuple().exponent
    return Rational(1, 2) * Rational(10) ** int(exp)


def install(rel_tol: float = REL_TOL, approximate_fractions: bool = True) -> None:
    """Replace math-verify's number comparison in this process (``approximate_fractions=False``: a float equals
    a rational only when it is exactly that rational)."""
    from math_verify import grader
    from sympy import Float, Integer, MatrixBase, Rational
    from sympy.matrices.expressions import MatrixExpr

    rel = Rational(str(rel_tol))

    def real_eq(a, b) -> bool:
        ea, eb = _exact(a), _exact(b)
        diff, scale = abs(ea - eb), max(abs(ea), abs(eb))
        if diff == 0:
            return True
        if not (isinstance(a, Float) or isinstance(b, Float) or a.atoms(Float) or b.atoms(Float)):
            return bool(diff <= scale * Rational(1, 10**50))  # exact values, known to 60 digits
        if not approximate_fractions and (isinstance(a, Rational) or isinstance(b, Rational)):
            return False  # a decimal that only approximates an exact fraction
        tol = rel * scale
        for f in (a, b):
            if isinstance(f, Float):
                tol = min(tol, _half_ulp(f))
        return bool(diff <= tol)

    def numeric_eq(a, b, float_rounding: int, numeric_precision: int) -> bool:
        if isinstance(a, (MatrixBase, MatrixExpr)) and isinstance(b, (MatrixBase, MatrixExpr)):
            a, b = grader.safe_sympy_doit(a), grader.safe_sympy_doit(b)
            return (isinstance(a, MatrixBase) and isinstance(b, MatrixBase) and a.shape == b.shape
                    and all(numeric_eq(x, y, float_rounding, numeric_precision)
                            for x, y in zip(a.flat(), b.flat(), strict=True)))
        if grader.is_atomic_or_pct_atomic(a, Integer) and grader.is_atomic_or_pct_atomic(b, Integer):
            return grader.get_pct_val(a, a) == grader.get_pct_val(b, b)  # math-verify's "9% == 9"
        try:
            a, b = grader.safe_sympy_doit(a), grader.safe_sympy_doit(b)
            if not (getattr(a, "is_number", False) and getattr(b, "is_number", False)):
                return bool((a - b).evalf(n=numeric_precision) == 0)
            if isinstance(a, Rational) and isinstance(b, Rational):
                return bool(a == b)
            if a.is_real and b.is_real:
                return real_eq(a, b)
            re_a, im_a = a.as_real_imag()
            re_b, im_b = b.as_real_imag()
            return real_eq(re_a, re_b) and real_eq(im_a, im_b)
        except Exception:  # noqa: BLE001 - an expression sympy cannot evaluate is not equal
            return False

    grader.sympy_numeric_eq = numeric_eq
