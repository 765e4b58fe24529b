#!/usr/bin/env bash
# Validate the Claude Code plugin surface with Claude Code's own validator, at a pinned CLI version.
#
#   scripts/validate-plugin.sh
#
# 1. Installs @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION from npm into .cache/claude-cli/ unless that
#    exact version is already there. That is the only network access, and it happens once.
# 2. Runs `claude plugin validate --strict --profile directory` twice:
#      on the repository root, which checks .claude-plugin/marketplace.json and runs the plugin-directory
#      checks (icon, README, stray system files, ...);
#      on .claude-plugin/plugin.json, which checks the plugin manifest and every skill, command and agent.
#    --strict turns warnings into failures. --profile directory adds the catalog's submission checks.
#    The JSON report of each run is also counted, and any error, warning or directory finding fails, and so
#    does a "Hosts not declared" line (plugin.json's network.hosts must list what the plugin reaches).
# 3. Checks that the top-level plugin.json is a link to .claude-plugin/plugin.json (one source of truth),
#    that the wrapper and these scripts parse (bash -n), and runs shellcheck on them when it is installed.
#
# The validator runs with a throwaway HOME, so your Claude Code settings and plugins do not affect it.
# Exit status: 0 when everything passes, 1 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."

CLAUDE_CODE_VERSION=2.1.332
prefix=.cache/claude-cli
claude="$prefix/node_modules/.bin/claude"

installed_version() { "$claude" --version 2>/dev/null | awk '{print $1}'; }

if [ ! -x "$claude" ] || [ "$(installed_version)" != "$CLAUDE_CODE_VERSION" ]; then
  echo "Installing Claude Code $CLAUDE_CODE_VERSION into $prefix (once)..." >&2
  mkdir -p "$prefix"
  npm install --prefix "$prefix" --no-audit --no-fund --no-save --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >&2
fi
got=$(installed_version || true)
if [ "$got" != "$CLAUDE_CODE_VERSION" ]; then
  echo "Error: $claude reports version '${got:-none}', expected $CLAUDE_CODE_VERSION." >&2
  exit 1
fi

home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
run_claude() { HOME="$home" DISABLE_AUTOUPDATER=1 CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 "$claude" "$@"; }

status=0

# Count what the JSON report says is wrong: manifest errors and warnings, each component's errors and
# warnings, and plugin-directory findings. --strict already fails on these; this makes the count visible.
count_problems() {
  # shellcheck disable=SC2016  # JavaScript, not shell: ${...} below are template literals
  node -e '
    let s = ""; process.stdin.on("data", d => s += d).on("end", () => {
      const r = JSON.parse(s);
      const parts = [r.manifest || {}, ...(r.contents || [])];
      const errors = parts.reduce((n, p) => n + (p.errors || []).length, 0);
      const warnings = parts.reduce((n, p) => n + (p.warnings || []).length, 0);
      const findings = ((r.directory || {}).findings || []).length;
      console.log(`${errors} errors, ${warnings} warnings, ${findings} directory findings`);
      process.exit(errors + warnings + findings === 0 && r.success ? 0 : 1);
    });'
}

for target in . .claude-plugin/plugin.json; do
  echo "=== claude plugin validate --strict --profile directory $target"
  if ! report=$(run_claude plugin validate --strict --profile directory "$target" 2>&1); then
    status=1
  fi
  echo "$report"
  # The network hosts the plugin reaches (the package index, the model hub) must be declared in plugin.json.
  if grep -q "Hosts not declared" <<<"$report"; then
    echo "Error: $target: hosts not declared; list them under network.hosts in .claude-plugin/plugin.json" >&2
    status=1
  fi
  if ! summary=$(run_claude plugin validate --strict --profile directory --json "$target" | count_problems); then
    status=1
  fi
  echo "--> $target: $summary"
done

echo "=== plugin.json link"
if [ -L plugin.json ] && [ "$(readlink plugin.json)" = ".claude-plugin/plugin.json" ]; then
  echo "plugin.json -> .claude-plugin/plugin.json"
else
  echo "Error: plugin.json must be a symbolic link to .claude-plugin/plugin.json" >&2
  status=1
fi

echo "=== shell scripts"
scripts=(bin/grpo-rlvr-plugin scripts/validate-plugin.sh hooks/guard_review.sh)
for f in "${scripts[@]}"; do
  bash -n "$f" || status=1
done
if command -v shellcheck >/dev/null 2>&1; then
  shellcheck "${scripts[@]}" && echo "shellcheck: clean" || status=1
else
  echo "shellcheck not installed; only bash -n was run (apt-get install shellcheck to add it)"
fi

if [ "$status" = 0 ]; then
  echo "Plugin validation passed (Claude Code $CLAUDE_CODE_VERSION)."
else
  echo "Plugin validation FAILED." >&2
fi
exit "$status"
