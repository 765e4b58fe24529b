#!/bin/sh
# Starts the plugin's PreToolUse hook (guard_review.py) under a Python that has its parser, tree-sitter-bash,
# without a search that costs more than the hook: the first of
#   1. the interpreter of $GRPO_RLVR_BIN (its #! line), when that is set;
#   2. the interpreter of the grpo-rlvr on PATH (its #! line): grpo-rlvr depends on the parser;
#   3. the plugin's private environment, ${CLAUDE_PLUGIN_DATA:-$XDG_DATA_HOME/grpo-rlvr-plugin}/venv
#      (bin/grpo-rlvr-plugin makes it on first use);
#   4. python3 on PATH (which may lack the parser: the hook then reads plain commands only, the gate's included,
#      and says how to install it).
# The hook runs isolated (python -I -S: no PYTHON* variables, no user site, no startup hooks or .pth files); it
# adds the interpreter's own site-packages itself. Each path above, and each place on PATH that would be found
# first, is protected by the hook from the agent's writes.
#
#   sh hooks/guard_review.sh            the hook (Claude Code sends the tool call on stdin)
#   sh hooks/guard_review.sh --where    which Python it runs under, and whether that one has the parser
#
# No Python at all, or one that ends with a status other than 0 (allow) and 2 (deny): the call is denied.

hook_dir=${0%/*}
[ "$hook_dir" = "$0" ] && hook_dir=.

shebang_python() {   # the interpreter on the #! line of $1, when it is a Python that can run
  [ -f "$1" ] || return 1
  IFS= read -r line < "$1" || return 1
  case $line in
    '#!'*) ;;
    *) return 1 ;;
  esac
  line=${line#\#!}
  line=${line# }
  line=${line%% *}
  case ${line##*/} in
    python*) [ -x "$line" ] && printf '%s\n' "$line" ;;
    *) return 1 ;;
  esac
}

py=
if [ -n "${GRPO_RLVR_BIN:-}" ]; then
  py=$(shebang_python "$GRPO_RLVR_BIN")
fi
if [ -z "$py" ] && grpo=$(command -v grpo-rlvr 2>/dev/null); then
  py=$(shebang_python "$grpo")
fi
if [ -z "$py" ]; then
  data=${CLAUDE_PLUGIN_DATA:-${XDG_DATA_HOME:-$HOME/.local/share}/grpo-rlvr-plugin}
  [ -x "$data/venv/bin/python" ] && py=$data/venv/bin/python
fi
if [ -z "$py" ]; then
  py=$(command -v python3 2>/dev/null)
fi
if [ -z "$py" ]; then
  echo "grpo-rlvr plugin: denied. The plugin's hook needs Python 3 (python3 on PATH, or grpo-rlvr installed:" \
       "\`grpo-rlvr-plugin --plugin-where\`); with none, every tool call is refused." >&2
  exit 2
fi

if [ "${1:-}" = "--where" ]; then
  printf 'hook python: %s\n' "$py"
  "$py" -I -S -c 'import sys; sys.path.insert(0, sys.argv[1])
from guard_review import _site_folders
sys.path += _site_folders()
from grpo_guard.bash_reading import ParserUnavailable, parser
try:
    parser()
    print("parser: tree-sitter-bash (every command read as bash reads it)")
except ParserUnavailable as e:
    print(f"parser: none ({e}); plain commands only. Install it: {sys.executable} -m pip install --user "
          "tree-sitter==0.26.1 tree-sitter-bash==0.25.1")' "$hook_dir"
  exit $?
fi

"$py" -I -S "$hook_dir/guard_review.py"
status=$?
if [ "$status" -ne 0 ] && [ "$status" -ne 2 ]; then   # a crash is a deny too: Claude Code runs the call on any other
  echo "grpo-rlvr plugin: denied. The hook's Python ($py) ended with status $status before it decided." >&2
  exit 2
fi
exit "$status"
