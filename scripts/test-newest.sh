#!/usr/bin/env bash
# The newest-releases lane: a third environment, .venv-newest, with grpo-rlvr on the newest TRL, transformers,
# datasets, peft and accelerate that the package registry serves and that TRL's own requirements allow, then the
# trainer tests on them: real GRPOTrainer runs on the tiny model (the trainer's callbacks and records, tool calls run
# concurrently, dynamic sampling, the review audit inside training, a plain TRL script diagnosed). It prints each
# package's version beside the one constraints.txt pins, so a failure names the release that brought it.
#
# What is resolved: pyproject.toml's dependencies and dev extra, with the project's own bounds on those five lifted;
# pip resolves the rest unpinned (the newest each allows), except torch, held to constraints.txt's pin (the CPU
# build here). Idempotent: every run asks the registry again (pip install --upgrade, eager), so a release that came
# out since is taken and nothing is reinstalled when none did. The lane tells when the pins could move; it moves
# none (constraints.txt moves only when the whole suite passes on the new versions).
#
# --prepare: install and check the environment, run no test. Other arguments go to pytest; test files or folders
# given (tests/...) replace the default set.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv-newest
NEWEST=(trl transformers datasets peft accelerate)
# requires-python in pyproject.toml (as scripts/bootstrap.sh checks it)
if [ ! -x "$VENV"/bin/python ] && ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 11) or sys.version_info >= (3, 15))' 2>/dev/null; then
  echo "Error: $PY is not Python 3.11 to 3.14 (grpo-rlvr needs >=3.11,<3.15); set PYTHON to one, e.g. PYTHON=python3.11 $0" >&2
  exit 2
fi
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
log=$VENV/install.log
grep '^torch==' constraints.txt > "$VENV/constraints.txt"
"$VENV/bin/python" - "${NEWEST[@]}" > "$VENV/requirements.txt" <<'EOF'
import re, sys, tomllib

lift = set(sys.argv[1:])
project = tomllib.load(open("pyproject.toml", "rb"))["project"]
for req in project["dependencies"] + project["optional-dependencies"]["dev"]:
    name = re.match(r"[A-Za-z0-9_.-]+(\[[^\]]*\])?", req).group(0)
    print(name if name.split("[")[0].lower() in lift else req)
EOF
echo "Resolving the newest ${NEWEST[*]} into $VENV (first run: a few minutes)..." >&2
if ! "$VENV/bin/python" -m pip install --no-compile --disable-pip-version-check --upgrade --upgrade-strategy eager \
     -c "$VENV/constraints.txt" -r "$VENV/requirements.txt" > "$log" 2>&1; then
  grep -v "is ignored" "$log" | tail -40 >&2
  echo "Error: resolving the newest releases into $VENV failed; the full log is $log" >&2
  exit 1
fi
stamp=$VENV/.grpo-rlvr-installed   # the package itself, without its dependencies (their bounds are lifted above)
want=$(sha256sum pyproject.toml | cut -d' ' -f1)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  "$VENV/bin/python" -m pip install --no-compile --disable-pip-version-check --no-deps -e . >> "$log" 2>&1 || {
    tail -20 "$log" >&2; echo "Error: installing grpo-rlvr into $VENV failed; the full log is $log" >&2; exit 1; }
  echo "$want" > "$stamp"
fi
# With a CPU-only torch, the registry's torchvision/torchaudio/torchcodec (linked against CUDA torch) break
# `import transformers` (as in scripts/test-vllm.sh); no test here needs them.
if "$VENV/bin/python" -c "import sys, torch; sys.exit(torch.version.cuda is not None)"; then
  "$VENV/bin/python" -m pip uninstall -y --disable-pip-version-check torchvision torchaudio torchcodec >> "$log" 2>&1
fi
scripts/compile-venv.sh "$VENV"   # up-to-date files are skipped: seconds after the first run
# What was resolved, beside the pins; pip check says which of the project's own bounds the new releases pass.
"$VENV/bin/python" - "${NEWEST[@]}" torch tokenizers huggingface_hub safetensors numpy <<'EOF'
import re, sys
from importlib.metadata import PackageNotFoundError, version

pins = dict(re.match(r"([^=\s]+)==(\S+)", line).groups() for line in open("constraints.txt")
            if re.match(r"[^=\s]+==", line))
pins = {k.lower().replace("_", "-"): v for k, v in pins.items()}
print("::: newest-releases lane: package, resolved here, pinned in constraints.txt")
for name in sys.argv[1:]:
    try:
        got = version(name)
    except PackageNotFoundError:
        got = "(not installed)"
    pin = pins.get(name.lower().replace("_", "-"), "-")
    print(f"    {name:16} {got:16} {pin:12} {'' if got.split('+')[0] == pin else 'moved'}")
EOF
"$VENV/bin/python" -m pip check --disable-pip-version-check 2>&1 | sed 's/^/    pip check: /' || true
export HF_HUB_OFFLINE=1 TOKENIZERS_PARALLELISM=false
if ! "$VENV/bin/python" -c "import trl, transformers, peft, datasets, accelerate, grpo_rlvr.trainer.trainers" \
     > "$VENV/import-check.log" 2>&1; then
  tail -20 "$VENV/import-check.log" >&2
  echo "Error: the newest releases do not import together with grpo-rlvr's trainers in $VENV; see" \
       "$VENV/import-check.log (that is the lane's finding: it cannot run its tests)" >&2
  exit 1
fi
[ "${1:-}" = --prepare ] && exit 0   # .ci/run prepares the environment ahead, while other lanes run
# The trainer tests, in one process (scripts/trainer-tests.sh; name test files to run more).
. scripts/trainer-tests.sh
paths=("${trainer_tests[@]}")
for a in "$@"; do case $a in tests/*) paths=(); break;; esac; done
exec "$VENV/bin/python" -m pytest -p no:cacheprovider -n 0 "${paths[@]}" "$@"
