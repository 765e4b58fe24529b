"""Variables of the process that asked for a check, read as data inside the clean interpreter.

The clean check (``run/clean_interpreter.py``) starts from an allowed environment: the caller's variables are
not its process environment, where the dynamic loader, glibc, OpenSSL and Python would act on them. One thing
it runs still reads a variable by a name the brief chooses: a judge reward's API key (``rubric_judge``'s
``api_key_env``), and the HTTP proxy a remote judge is reached through. :func:`getenv` and :func:`proxies` give
them from the caller's environment, handed over on the check's stdin, without ever setting them in this process;
everywhere else they are ``os.environ``'s.
"""

from __future__ import annotations

import os

_caller: dict[str, str] | None = None   # set only in the clean interpreter, by its start script


def use_caller_environment(environ: dict[str, str]) -> None:
    """From now on, in this process, :func:`getenv` reads ``environ`` (the caller's variables, as data)."""
    global _caller
    _caller = {str(k): str(v) for k, v in environ.items()}


def getenv(name: str, default: str | None = None) -> str | None:
    """``name`` in the caller's environment inside the clean interpreter, else in this process's."""
    if _caller is not None:
        return _caller.get(name, default)
    return os.environ.get(name, default)


def proxies() -> dict[str, str]:
    """The HTTP proxies the caller's environment names (``https_proxy``…), as ``urllib`` reads them."""
    import urllib.request

    if _caller is None:
        return urllib.request.getproxies()
    named = sorted((k for k in _caller if k.lower().endswith("_proxy") and _caller[k]), key=lambda k: k.islower())
    return {k[:-6].lower(): _caller[k] for k in named}   # lower-case names win, as in urllib
