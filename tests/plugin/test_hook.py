"""The plugin's PreToolUse hook, fed the JSON Claude Code sends on stdin and run as Claude Code runs it
(``plugin/hook_calls.py``). It denies (exit 2, reason on stderr) running `review` and writing under inspection/;
it allows everything else (exit 0). The issue-53 cases (each attack run for real as a control, the friction
corpus, the docs' commands) are in test_hook_cases.py; the fuzzed corpus in test_hook_fuzz.py."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from paths import REPO
from plugin.hook_calls import HOOKS, call, hook_command, hook_env


def test_hooks_json_is_claude_codes_format():
    (entry,) = HOOKS["hooks"]["PreToolUse"]
    assert entry["matcher"] == "*"   # every tool: the built-in writers, MCP tools and any added later
    # /bin/sh by its path: a `sh` the agent put first on PATH is never what runs the hook
    assert hook_command() == '/bin/sh "${CLAUDE_PLUGIN_ROOT}/hooks/guard_review.sh"'


@pytest.mark.parametrize("command", [
    "grpo-rlvr review runs/x/inspection",
    "grpo-rlvr review runs/x/inspection --reviewer me",
    "grpo-rlvr-plugin review runs/x/inspection",
    "${CLAUDE_PLUGIN_ROOT}/bin/grpo-rlvr-plugin review out/inspection",
    "/home/u/.venv/bin/grpo-rlvr review out/inspection",
    "env grpo-rlvr review out/inspection",
    "env -i PATH=$PATH grpo-rlvr review out/inspection",
    "sh -c 'grpo-rlvr review out/inspection'",
    'bash -lc "cd proj && grpo-rlvr review out/inspection"',
    "python -m grpo_rlvr review out/inspection",
    "python3 -m grpo_rlvr.cli review out/inspection",
    "yes a | grpo-rlvr review out/inspection",
    'script -qc "grpo-rlvr review out/inspection" /dev/null',
    "nohup grpo-rlvr review out/inspection &",
    "echo $(grpo-rlvr review out/inspection)",
    "grpo-rlvr gate out/inspection || grpo-rlvr review out/inspection",
    "R=grpo-rlvr; $R review out/inspection",
    'python -c "from grpo_rlvr.review.session import review; review(\'out/inspection\')"',
    'python -c "from grpo_rlvr.review import session; session.review(\'out/inspection\')"',
])
def test_running_review_is_denied(command):
    out = call("Bash", {"command": command, "description": "review the samples"})
    assert out.returncode == 2 and "never runs it" in out.stderr, (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input", [
    ("Write", {"file_path": "/home/u/project/runs/a/inspection/samples.jsonl", "content": "{}"}),
    ("Edit", {"file_path": "/home/u/project/out/inspection/manifest.json", "old_string": "a", "new_string": "b"}),
    ("MultiEdit", {"file_path": "/p/out/inspection/samples.jsonl", "edits": [{"old_string": "a", "new_string": "b"}]}),
    ("NotebookEdit", {"notebook_path": "/p/inspection/notes.ipynb", "new_source": "x"}),
    ("Write", {"file_path": "/p/out/inspection.bak-20260101T000000Z/samples.jsonl", "content": ""}),
    ("Edit", {"file_path": "/p/out/run/brief.lock.json", "old_string": "a", "new_string": "b"}),
])
def test_edits_under_inspection_are_denied(tool, tool_input):
    out = call(tool, tool_input)
    assert out.returncode == 2 and "inspection/" in out.stderr, out.stderr


@pytest.mark.parametrize("command", [
    "echo '{}' > out/inspection/samples.jsonl",
    "jq . x.json >> /p/out/inspection/manifest.json",
    "python fix.py 1>out/inspection/samples.jsonl",
    "cp /tmp/forged.jsonl out/inspection/samples.jsonl",
    "cp -t out/inspection /tmp/forged.jsonl",
    "mv /tmp/forged.jsonl out/inspection/samples.jsonl",
    "mv out/inspection /tmp/gone",
    "rm -rf out/inspection",
    "sed -i 's/disagree/agree/' out/inspection/samples.jsonl",
    "perl -pi -e 's/disagree/agree/' out/inspection/samples.jsonl",
    "cat x | tee out/inspection/samples.jsonl",
    "dd if=/tmp/x of=out/inspection/samples.jsonl",
    "sudo truncate -s 0 out/inspection/samples.jsonl",
    "cd out && touch inspection/.review.lock",
])
def test_shell_writes_under_inspection_are_denied(command):
    out = call("Bash", {"command": command})
    assert out.returncode == 2 and "written only by grpo-rlvr itself" in out.stderr, (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input", [
    ("Bash", {"command": "grpo-rlvr gate out/inspection --json"}),
    ("Bash", {"command": "grpo-rlvr-plugin gate runs/review-2/inspection --brief brief.yaml --json"}),
    ("Bash", {"command": "grpo-rlvr-plugin inspect brief.yaml --force --json"}),
    ("Bash", {"command": "grpo-rlvr-plugin train out/run --dry-run --json"}),
    ("Bash", {"command": "cat out/inspection/samples.jsonl | jq .verdict > /tmp/verdicts.json"}),
    ("Bash", {"command": "cp out/inspection/report.html /tmp/report.html"}),
    ("Bash", {"command": "sed -n 1,5p out/inspection/samples.jsonl"}),
    ("Bash", {"command": "echo 'please run grpo-rlvr gate next' && ls out/inspection"}),
    ("Write", {"file_path": "/home/u/project/brief.yaml", "content": "name: x"}),
    ("Edit", {"file_path": "/home/u/project/my_reward.py", "old_string": "a", "new_string": "b"}),
    ("Read", {"file_path": "/home/u/project/out/inspection/samples.jsonl"}),
])
def test_everything_else_is_allowed(tool, tool_input):
    out = call(tool, tool_input)
    assert out.returncode == 0 and out.stdout == "" and out.stderr == "", out.stderr


def test_unparseable_input_is_denied_in_one_line_not_crashed():
    """Claude Code runs a call whose hook crashed (any exit but 2): input the hook cannot read is a deny."""
    for raw in ("not json", "[]", '{"tool_name": "Bash"}', '{"tool_name": "Bash", "tool_input": "ls"}', "\xff\xfe"):
        out = subprocess.run(["bash", "-c", hook_command()], input=raw, capture_output=True, text=True,
                             env=hook_env(), timeout=30)
        assert out.returncode == 2 and "Traceback" not in out.stderr, (raw, out.stderr)
        assert out.stderr.count("\n") == 1 and "could not decide" in out.stderr, (raw, out.stderr)


# ---------------------------------------------------------------------------- bypasses, one each, on real files


@pytest.fixture
def project(tmp_path):
    """A project folder with a real inspection, a forged one elsewhere, and a tar of the forgery."""
    import tarfile

    (tmp_path / "out" / "inspection").mkdir(parents=True)
    (tmp_path / "out" / "inspection" / "samples.jsonl").write_text("{}\n")
    (tmp_path / "forged" / "inspection").mkdir(parents=True)
    (tmp_path / "forged" / "inspection" / "samples.jsonl").write_text("{}\n")
    (tmp_path / "link").symlink_to(tmp_path / "out" / "inspection")
    with tarfile.open(tmp_path / "forged.tar", "w") as tf:
        tf.add(tmp_path / "forged" / "inspection", arcname="inspection")
    return tmp_path


@pytest.mark.parametrize("cwd,command", [
    ("out/inspection", "sed -i 's/disagree/agree/' samples.jsonl"),                 # relative, from inside
    (".", "cd out/inspection && sed -i 's/disagree/agree/' samples.jsonl"),         # relative, after a cd
    (".", "echo '{}' > link/samples.jsonl"),                                         # through a symlink
    (".", "sed -i 's/a/b/' link/samples.jsonl"),
    (".", "ln -s out/inspection view"),                                              # making such a symlink
    (".", "sed -i 's/disagree/agree/' out/insp*/samples.jsonl"),                     # a glob pattern
    (".", "sed -i 's/disagree/agree/' out/*/samples.jsonl"),                         # a glob that matches it now
    (".", "D=out/inspection; sed -i 's/a/b/' $D/samples.jsonl"),                     # through a variable
    (".", "cp -r forged/inspection out/"),                                           # cp -r lands in it
    (".", "cp -r forged/. out/"),                                                    # cp -r merges over it
    (".", "rsync -a forged/ out/"),                                                  # rsync merges over it
    (".", "rsync -a /tmp/x/ out/inspection/"),
    (".", "tar -xf forged.tar -C out"),                                              # tar extracts it
    ("out", "tar xf ../forged.tar"),
    (".", "awk -i inplace '{print}' out/inspection/samples.jsonl"),                  # awk -i inplace
    (".", "gawk -i inplace '{sub(/disagree/, \"agree\")} 1' out/inspection/samples.jsonl"),
    (".", "sed -i 's/dis agree/agree/' out/inspection/samples.jsonl"),              # a script with a space in it
    (".", "rm -rf out"),                                                             # deleting the folder above
    (".", "mv out /tmp/elsewhere"),
])
def test_each_bypass_of_the_shell_check_is_denied(project, cwd, command):
    out = call("Bash", {"command": command}, cwd=str(project / cwd))
    assert out.returncode == 2 and "denied" in out.stderr, (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input", [
    ("mcp__filesystem__write_file", {"path": "out/inspection/samples.jsonl", "content": "{}"}),
    ("mcp__filesystem__edit_file", {"path": "link/samples.jsonl", "edits": [{"oldText": "a", "newText": "b"}]}),
    ("mcp__filesystem__move_file", {"source": "out/inspection/samples.jsonl", "destination": "/tmp/x.jsonl"}),
    ("mcp__fs__create_directory", {"path": "out/inspection.bak-1"}),
    ("mcp__shell__run_command", {"command": "sed -i 's/a/b/' out/inspection/samples.jsonl"}),
    ("Write", {"file_path": "link/samples.jsonl", "content": ""}),
])
def test_mcp_and_relative_tool_writes_are_denied(project, tool, tool_input):
    out = call(tool, tool_input, cwd=str(project))
    assert out.returncode == 2 and "denied" in out.stderr, (tool, out.stderr)


@pytest.mark.parametrize("command", [
    "PYTHONPATH=/tmp/hook grpo-rlvr gate out/inspection",
    "export PYTHONPATH=/tmp/hook",
    "env PYTHONSTARTUP=/tmp/s.py python -m grpo_rlvr gate out/inspection",
    "PYTHONHOME=/tmp/py python train.py",
    "PYTHONUSERBASE=/tmp/u grpo-rlvr train out/run",
    "LD_PRELOAD=/tmp/x.so grpo-rlvr gate out/inspection",
    "python -c 'import os; os.environ[\"PYTHONPATH\"] = \"/tmp\"; os.system(\"grpo-rlvr gate x\")'",
    "declare -x PYTHONPATH=/tmp/hook",
    "GRPO_RLVR_CACHE=/tmp/forged-hashes grpo-rlvr gate out/inspection",
])
def test_setting_interpreter_variables_is_denied(command):
    out = call("Bash", {"command": command})
    assert out.returncode == 2 and "PYTHONPATH, PYTHONSTARTUP" in out.stderr, (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input", [
    ("Write", {"file_path": "/home/u/.venv/lib/python3.11/site-packages/sitecustomize.py", "content": "x"}),
    ("Write", {"file_path": "/home/u/.local/lib/python3.11/site-packages/usercustomize.py", "content": "x"}),
    ("Bash", {"command": "echo 'import evil' > .venv/lib/python3.11/site-packages/zz.pth"}),
    ("Bash", {"command": "cp hook.py /usr/lib/python3/dist-packages/sitecustomize.py"}),
    ("Edit", {"file_path": "/home/u/.venv/lib/python3.11/site-packages/grpo_rlvr/gate.py", "old_string": "a",
              "new_string": "b"}),
    ("Bash", {"command": "sed -i 's/x/y/' .venv/lib/python3.11/site-packages/grpo_rlvr/gate.py"}),
    ("Bash", {"command": "echo x > .venv/lib/python3.11/site-packages/__editable___grpo_rlvr_0_1_0_finder.py"}),
])
def test_startup_hooks_and_the_installed_package_are_not_written(tool, tool_input):
    out = call(tool, tool_input)
    assert out.returncode == 2 and "denied" in out.stderr, (tool_input, out.stderr)


def test_the_plugin_itself_and_the_hash_cache_are_not_written(tmp_path):
    cache = tmp_path / "cache"
    env = hook_env(GRPO_RLVR_CACHE=str(cache))
    for tool, tool_input in (
            ("Edit", {"file_path": str(REPO / "hooks" / "guard_review.py"), "old_string": "a", "new_string": "b"}),
            ("Bash", {"command": f"echo '{{}}' > {cache}/file-hashes/1-2.json"})):
        event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": str(tmp_path)}
        out = subprocess.run(["bash", "-c", hook_command()], input=json.dumps(event), capture_output=True,
                             text=True, env=env, timeout=30)
        assert out.returncode == 2 and "denied" in out.stderr, (tool_input, out.stderr)


def test_the_account_homes_allowed_signers_is_not_written_whatever_home_says(tmp_path):
    """The gate reads ``~/.config/grpo-rlvr/allowed_signers`` from the password database's home, so the hook
    protects that path even when HOME and XDG_CONFIG_HOME point elsewhere."""
    import pwd

    target = Path(pwd.getpwuid(os.getuid()).pw_dir) / ".config" / "grpo-rlvr" / "allowed_signers"
    env = hook_env(HOME=str(tmp_path), XDG_CONFIG_HOME=str(tmp_path))
    for tool, tool_input in (("Write", {"file_path": str(target), "content": "agent ssh-ed25519 AAAA"}),
                             ("Bash", {"command": f"echo 'agent ssh-ed25519 AAAA' >> {target}"})):
        event = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input, "cwd": str(tmp_path)}
        out = subprocess.run(["bash", "-c", hook_command()], input=json.dumps(event), capture_output=True,
                             text=True, env=env, timeout=30)
        assert out.returncode == 2 and "denied" in out.stderr, (tool_input, out.stderr)


@pytest.mark.parametrize("tool,tool_input,cwd", [
    ("Bash", {"command": "echo $PYTHONPATH"}, "."),
    ("Bash", {"command": "cp -r forged /tmp/copy-elsewhere-ok"}, "forged/inspection/.."),
    ("Bash", {"command": "sed -n 1p link/samples.jsonl"}, "."),
    ("Bash", {"command": "tar -tf forged.tar"}, "."),
    ("Bash", {"command": "rm -rf /tmp/grpo-rlvr-hook-test-scratch"}, "."),
    ("mcp__filesystem__read_file", {"path": "out/inspection/samples.jsonl"}, "."),
    ("mcp__filesystem__write_file", {"path": "notes/todo.md", "content": "x"}, "."),
])
def test_reading_and_unrelated_writes_stay_allowed(project, tool, tool_input, cwd):
    out = call(tool, tool_input, cwd=str(project / cwd))
    assert out.returncode == 0 and out.stderr == "", (tool_input, out.stderr)


# ---------------------------------------------------------------------------- red team: the shell's other doors


@pytest.mark.parametrize("cwd,command", [
    (".", "python -c \"open('out/inspection/samples.jsonl', 'w').write('{}')\""),      # inline code
    (".", "python3 - <<'EOF'\nimport pathlib\npathlib.Path('out/inspection/samples.jsonl').write_text('{}')\nEOF"),
    (".", "python -c \"import shutil; shutil.copy('/tmp/f', 'out/inspection/samples.jsonl')\""),
    (".", "perl -e 'open(F, \">out/inspection/samples.jsonl\"); print F \"{}\"'"),
    (".", "node -e \"require('fs').writeFileSync('out/inspection/samples.jsonl', '{}')\""),
    (".", "git checkout HEAD -- out/inspection/samples.jsonl"),                         # git puts old bytes back
    (".", "git restore out/inspection"),
    (".", "git clean -fdx"),                                                              # deletes the untracked review
    (".", "git stash -u"),
    (".", "find out -name samples.jsonl -delete"),                                        # find
    (".", "find . -name samples.jsonl -exec sed -i s/disagree/agree/ {} +"),
    (".", "ls out/inspection/samples.jsonl | xargs rm"),                                  # xargs
    (".", "echo '{}' > `echo out/inspection/samples.jsonl`"),                             # built at run time
    (".", "echo '{}' > $(echo out/inspection)/samples.jsonl"),
    (".", "cp /tmp/f >(cat) out/inspection/samples.jsonl"),
    (".", "echo '{}' > out/inspecti\\\non/samples.jsonl"),                                # a line continuation
    (".", "echo '{}' > out/{inspection,x}/samples.jsonl"),                                # brace expansion
    (".", "cd link && echo '{}' > samples.jsonl"),                                        # cd into a symlink
    (".", "cd out && cd inspection && echo '{}' > samples.jsonl"),                        # two cds, then >
    (".", "vim -c 'g/disagree/s//agree/' -c wq out/inspection/samples.jsonl"),           # editors
    (".", "jq . x | sponge out/inspection/samples.jsonl"),
    (".", "sqlite3 out/inspection/notes.db 'create table t(x)'"),
    (".", "echo x > .venv/bin/python._pth"),                 # replaces sys.path even under python -I -S
    (".", "echo 'home = /tmp/py' > .venv/pyvenv.cfg"),       # another Python home
    (".", "echo '{}' > out/samples/samples.jsonl"),          # an artifact `inspect --out out/samples` wrote
    (".", "rm -rf out/samples"),
])
def test_red_team_shell_doors_are_denied(project, cwd, command):
    (project / "out" / "samples").mkdir()
    for name in ("manifest.json", "samples.jsonl"):
        (project / "out" / "samples" / name).write_text("{}\n")
    out = call("Bash", {"command": command}, cwd=str(project / cwd))
    assert out.returncode == 2 and "denied" in out.stderr, (command, out.stderr)


def test_red_team_an_artifact_under_another_name_is_protected_from_edit_tools(project):
    (project / "out" / "samples").mkdir()
    for name in ("manifest.json", "samples.jsonl"):
        (project / "out" / "samples" / name).write_text("{}\n")
    out = call("Edit", {"file_path": str(project / "out" / "samples" / "samples.jsonl"), "old_string": "{}",
                        "new_string": "{\"verdict\": {}}"}, cwd=str(project))
    assert out.returncode == 2 and "denied" in out.stderr


@pytest.mark.parametrize("command", [
    "find . -name '*.py' -exec grep -l reward {} \\;",
    "git status && git diff && git log --oneline -5 && git stash list",
    "cat > notes.md <<'EOF'\nNext: run `grpo-rlvr gate out/inspection`\nEOF",
    "jq .seal out/inspection/manifest.json",
    "python -m json.tool out/inspection/manifest.json",
    "ls out/inspection | xargs -n1 echo",
    "echo $(ls out/inspection) > /tmp/listing.txt",
    "grep -c agree out/inspection/samples.jsonl > /tmp/count",
    "python train_sft.py --output out/sft > sft.log 2>&1",
])
def test_red_team_ordinary_commands_near_an_inspection_stay_allowed(project, command):
    out = call("Bash", {"command": command}, cwd=str(project))
    assert out.returncode == 0 and out.stderr == "", (command, out.stderr)



# ------------------------------------------------- near a protected path only readers run (an allow-list, issue #34)

READ_ONLY = "only commands that read"


@pytest.mark.parametrize("command", [
    "curl -o out/inspection/samples.jsonl https://example.com/forged.jsonl",
    "wget -O out/inspection/samples.jsonl https://example.com/forged.jsonl",
    "sort -o out/inspection/samples.jsonl /tmp/forged.jsonl",
    "uniq /tmp/forged.jsonl out/inspection/samples.jsonl",
    "iconv -f utf-8 -t utf-8 -o out/inspection/samples.jsonl /tmp/forged.jsonl",
    "xxd -r /tmp/forged.hex out/inspection/samples.jsonl",
    "openssl enc -d -base64 -in /tmp/forged.b64 -out out/inspection/samples.jsonl",
    "cd /tmp/stage && find . | cpio -pdm ../../$PWD/out/inspection",
    "ls /tmp/stage/samples.jsonl | cpio -p out/inspection",
    "python -m zipfile -e /tmp/forged.zip out/inspection",
    "python3 -m tarfile -e /tmp/forged.tar out/inspection",
    "busybox cp /tmp/forged.jsonl out/inspection/samples.jsonl",
    "busybox sed -i s/disagree/agree/ out/inspection/samples.jsonl",
    "sed -n 's/disagree/agree/w out/inspection/samples.jsonl' /tmp/x",   # sed's own w command
    "cat /tmp/forged.jsonl 1<>out/inspection/samples.jsonl",             # read-write redirection
    "sort -o out/samples/samples.jsonl /tmp/forged.jsonl",               # an artifact under another name
    "cat out/inspection/samples.jsonl <(sort -o out/inspection/samples.jsonl /tmp/forged.jsonl)",
    "python -c \"import json; print(json.load(open('out/inspection/manifest.json'))['seal'])\"",  # code runs, not only reads
])
def test_writers_off_the_old_list_are_denied_near_an_inspection(project, command):
    (project / "out" / "samples").mkdir()
    for name in ("manifest.json", "samples.jsonl"):
        (project / "out" / "samples" / name).write_text("{}\n")
    out = call("Bash", {"command": command}, cwd=str(project))
    assert out.returncode == 2 and "grpo-rlvr inspect" in out.stderr, (command, out.stderr)
    assert READ_ONLY in out.stderr or "written only by grpo-rlvr itself" in out.stderr, (command, out.stderr)


FORGED_MANIFEST = json.dumps({"format_version": 1, "brief": {"fingerprint": "f" * 64}, "samples_digest": "d" * 64,
                              "seal": "s" * 64})


@pytest.fixture
def fresh(project):
    """A folder that holds a forged, inspection-looking manifest.json and nothing else yet."""
    (project / "fresh").mkdir()
    (project / "fresh" / "manifest.json").write_text(FORGED_MANIFEST)
    (project / "plain").mkdir()
    (project / "plain" / "manifest.json").write_text("{}\n")
    (project / "half").mkdir()
    (project / "half" / "samples.jsonl").write_text("{}\n")
    return project


@pytest.mark.parametrize("tool,tool_input", [
    ("Write", {"file_path": "new/manifest.json", "content": FORGED_MANIFEST}),          # an inspection's manifest
    ("Write", {"file_path": "half/manifest.json", "content": "{}"}),                    # beside a samples.jsonl
    ("Write", {"file_path": "plain/samples.jsonl", "content": "{}"}),                   # beside a manifest.json
    ("Edit", {"file_path": "plain/manifest.json", "old_string": "{}", "new_string": FORGED_MANIFEST}),
    ("Write", {"file_path": "fresh/report.html", "content": "<html>"}),
    ("Bash", {"command": "mv /tmp/forged.jsonl fresh/samples.jsonl"}),                  # then moved into it
    ("Bash", {"command": "mv /tmp/stage/samples.jsonl fresh/"}),
    ("Bash", {"command": "cp /tmp/forged.jsonl plain/samples.jsonl"}),
    ("Bash", {"command": "cp /tmp/forged.jsonl half/manifest.json"}),
    ("Bash", {"command": "cat > new/manifest.json <<'EOF'\n" + FORGED_MANIFEST + "\nEOF"}),
    ("Bash", {"command": "cat /tmp/m.json > new/manifest.json && mv /tmp/s.jsonl new/samples.jsonl"}),  # both at once
    ("Bash", {"command": "cp fresh/manifest.json new/"}),                               # a copy starts another
    ("mcp__filesystem__write_file", {"path": "new/manifest.json", "content": FORGED_MANIFEST}),
])
def test_a_forged_inspection_in_a_fresh_folder_is_denied(fresh, tool, tool_input):
    out = call(tool, tool_input, cwd=str(fresh))
    assert out.returncode == 2 and "denied" in out.stderr, (tool_input, out.stderr)


@pytest.mark.parametrize("command", [
    "cat out/inspection/samples.jsonl",
    "head -n 3 out/inspection/samples.jsonl | cut -c1-80",
    "grep -c disagree out/inspection/samples.jsonl",
    "rg -n verdict out/inspection",
    "jq -r '.verdict.verdict' out/inspection/samples.jsonl | sort | uniq -c",
    "python3 -m json.tool --indent 2 out/inspection/manifest.json",
    "wc -l out/inspection/*.jsonl && ls -la out/inspection 2>/dev/null",
    "diff out/inspection/samples.jsonl forged/inspection/samples.jsonl; sha256sum out/inspection/*",
    "cd out/inspection && cat samples.jsonl | head",
    "grpo-rlvr gate out/inspection --json",
    "grpo-rlvr inspect brief.yaml --out out/inspection --force",
    "python -m grpo_rlvr gate out/inspection",
    "LC_ALL=C sort out/inspection/samples.jsonl > /tmp/sorted.jsonl",
    "find out/inspection -name '*.jsonl'",
    "for f in out/inspection/*; do head -c 200 \"$f\"; done",
    # unrelated to any inspection: writers are none of this layer's business
    "sort -o out.txt in.txt",
    "curl -o x.tar.gz https://example.com/x.tar.gz",
    "uniq in.txt out.txt && xxd -r dump.hex bin.dat",
    "python -c \"open('notes.txt', 'w').write('x')\"",
    "busybox sed -i s/a/b/ notes.txt",
])
def test_reads_near_an_inspection_and_unrelated_writes_stay_allowed(fresh, command):
    out = call("Bash", {"command": command}, cwd=str(fresh))
    assert out.returncode == 0 and out.stderr == "", (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input,denied", [
    ("mcp__jupyter__execute_cell", {"notebook": "out/inspection/samples.jsonl", "code": "x"}, True),
    ("SomeToolAddedLater", {"path": "out/inspection/samples.jsonl"}, True),
    ("mcp__db__run_query", {"database": "out/samples/samples.jsonl"}, True),
    ("mcp__db__run_query", {"sql": "select 1"}, False),                                  # no path argument
    ("mcp__filesystem__list_directory", {"path": "out/inspection"}, False),              # says it reads
    ("Glob", {"pattern": "out/inspection/*"}, False),
])
def test_tools_not_known_to_read_stay_off_protected_paths(project, tool, tool_input, denied):
    (project / "out" / "samples").mkdir()
    for name in ("manifest.json", "samples.jsonl"):
        (project / "out" / "samples" / name).write_text("{}\n")
    out = call(tool, tool_input, cwd=str(project))
    assert (out.returncode == 2 and "denied" in out.stderr) if denied else (out.returncode == 0 and not out.stderr), \
        (tool, out.stderr)


# ---------------------------------------------------------------------------- a run folder, its records, the run key


@pytest.fixture
def run_folder(project):
    """What `grpo-rlvr render` and a training leave in out/run: the rendered files, output/ and its records."""
    run = project / "out" / "run"
    (run / "output").mkdir(parents=True)
    for name in ("brief.lock.json", "train.py", "grpo_config.yaml", "launch.sh", "accelerate.yaml"):
        (run / name).write_text("x\n")
    for name in ("checkpoints.json", "provenance.json", "metrics.jsonl"):
        (run / "output" / name).write_text("{}\n")
    (project / "scratch").mkdir()
    (project / "scratch" / "train.py").write_text("print('mine')\n")   # a folder without a lock: not a run
    return project


@pytest.mark.parametrize("tool,tool_input", [
    ("Write", {"file_path": "out/run/train.py", "content": "print('no gate')"}),
    ("Edit", {"file_path": "out/run/grpo_config.yaml", "old_string": "x", "new_string": "y"}),
    ("Edit", {"file_path": "out/run/output/checkpoints.json", "old_string": "{}", "new_string": "{\"checkpoint-1\": {}}"}),
    ("Write", {"file_path": "elsewhere/output/provenance.json", "content": "{}"}),      # by its name, anywhere
    ("mcp__filesystem__write_file", {"path": "out/run/accelerate.yaml", "content": "x"}),
    ("Bash", {"command": "echo 'python -c pass' >> out/run/launch.sh"}),
    ("Bash", {"command": "sed -i s/max_steps/x/ out/run/grpo_config.yaml"}),
    ("Bash", {"command": "cp /tmp/ledger.json out/run/output/checkpoints.json"}),
    ("Bash", {"command": "cd out/run/output && cat /tmp/p.json > provenance.json"}),
    ("Bash", {"command": "python -c \"import json; json.dump({}, open('out/run/output/provenance.json', 'w'))\""}),
    ("Bash", {"command": "rm -rf out/run/output"}),
    ("Bash", {"command": "python out/run/train.py --resume out/run/output/checkpoint-9"}),   # the door: grpo-rlvr train
    ("Bash", {"command": "bash out/run/launch.sh"}),
    ("Bash", {"command": "accelerate launch --config_file out/run/accelerate.yaml out/run/train.py"}),
])
def test_a_run_folders_files_and_records_are_written_only_by_grpo_rlvr(run_folder, tool, tool_input):
    out = call(tool, tool_input, cwd=str(run_folder))
    assert out.returncode == 2 and "denied" in out.stderr, (tool_input, out.stderr)
    assert "grpo-rlvr render" in out.stderr or "`render`" in out.stderr, out.stderr
    assert "grpo-rlvr train RUN" in out.stderr or "train RUN" in out.stderr, out.stderr


@pytest.mark.parametrize("command", [
    "grpo-rlvr train out/run --resume",
    "grpo-rlvr diagnose out/run --json",
    "grpo-rlvr report out/run --json",
    "grpo-rlvr watch out/run --once",
    "grpo-rlvr render brief.yaml --out out/run --force",
    "cat out/run/train.py && head out/run/grpo_config.yaml",
    "jq . out/run/output/checkpoints.json out/run/output/provenance.json",
    "tail -n 5 out/run/output/metrics.jsonl",
    "cp out/run/grpo_config.yaml /tmp/compare.yaml",
    "python scratch/train.py",              # not a run folder (no brief.lock.json beside it)
    "echo x > out/run/output/notes.txt",    # not one of the run's records
    "~/.local/share/grpo-rlvr-plugin/venv/bin/grpo-rlvr diagnose out/run",   # the plugin's venv is not the key's folder
])
def test_reading_a_run_and_grpo_rlvrs_own_commands_stay_allowed(run_folder, command):
    out = call("Bash", {"command": command}, cwd=str(run_folder))
    assert out.returncode == 0 and out.stderr == "", (command, out.stderr)


def _passwd_key() -> str:
    import pwd

    return os.path.join(pwd.getpwuid(os.getuid()).pw_dir, ".local", "share", "grpo-rlvr", "run-key")


@pytest.mark.parametrize("tool,tool_input", [
    ("Read", {"file_path": _passwd_key()}),
    ("Grep", {"pattern": ".", "path": os.path.dirname(_passwd_key())}),
    ("Glob", {"pattern": os.path.dirname(_passwd_key()) + "/*"}),
    ("Write", {"file_path": _passwd_key(), "content": "0" * 64}),
    ("Bash", {"command": f"cat {_passwd_key()}"}),
    ("Bash", {"command": "cat ~/.local/share/grpo-rlvr/run-key"}),
    ("Bash", {"command": "D=~/.local/share/grpo-rlvr; xxd $D/run-key"}),
    ("Bash", {"command": f"cd {os.path.dirname(os.path.dirname(_passwd_key()))} && cat grpo-rlvr/*"}),
    ("mcp__filesystem__read_file", {"path": _passwd_key()}),
])
def test_the_run_key_is_neither_read_nor_written(tool, tool_input, tmp_path):
    out = call(tool, tool_input, cwd=str(tmp_path))
    assert out.returncode == 2 and "run key" in out.stderr and "neither reads nor writes" in out.stderr, \
        (tool_input, out.stderr)


# ------------------------------------------------------------------- issue 45: bash read as bash reads it (tree-sitter)


@pytest.mark.parametrize("command", [
    r"cp /tmp/forged.jsonl $'out/inspectio\x6e/samples.jsonl'",           # ANSI-C quoting, a hex escape
    r"echo '{}' > $'out/\151nspection/samples.jsonl'",                    # an octal escape
    r"cp /tmp/f $'out/\u0069nspection/samples.jsonl'",                    # a \u escape
    "cp /tmp/forged.jsonl $\"out/inspection/samples.jsonl\"",            # locale quoting
    r"cat /tmp/f > out/insp\ection/samples.jsonl",                        # a backslash bash drops
    "D=out; E=inspection; cp /tmp/f $D/${E}/samples.jsonl",              # variables set earlier
    "cp /tmp/f ${NOT_SET_ANYWHERE:-out/inspection}/samples.jsonl",       # a default bash would use
])
def test_bash_quoting_and_variables_do_not_hide_a_path(project, command):
    out = call("Bash", {"command": command}, cwd=str(project))
    assert out.returncode == 2 and "denied" in out.stderr, (command, out.stderr)


def test_the_signers_file_spelled_in_ansi_c_is_not_written(tmp_path):
    home = tmp_path / "home"
    (home / ".config" / "grpo-rlvr").mkdir(parents=True)
    for command in (rf"echo 'agent ssh-ed25519 AAAA' >> $'{home}/.config/grpo-rlv\x72/allowed_signers'",
                    rf"cp /tmp/mine $'{home}/.config/\147rpo-rlvr/allowed_signers'",
                    f"cp /tmp/mine $\"{home}/.config/grpo-rlvr/allowed_signers\""):
        out = call("Bash", {"command": command}, cwd=str(tmp_path), HOME=str(home), XDG_CONFIG_HOME="")
        assert out.returncode == 2 and "denied" in out.stderr, (command, out.stderr)


def test_the_reader_decodes_ansi_c_octal_hex_and_locale_quoting():
    sys.path.insert(0, str(REPO / "hooks"))
    try:
        from grpo_guard.bash_reading import ansi_c, read_command
    finally:
        sys.path.remove(str(REPO / "hooks"))
    assert ansi_c(r"inspectio\x6e") == "inspection" and ansi_c(r"\151nspection") == "inspection"
    assert ansi_c(r"a\tb\u00e9\U0001F600\cA\e") == "a\tb\u00e9\U0001F600\x01\x1b"
    [cmd] = read_command("printf %s $\"out/inspection\" 'x'\\''y' \"a\\\"b\" $'\\''").commands
    assert cmd.words == ["printf", "%s", "out/inspection", "x'y", 'a"b', "'"]


@pytest.fixture
def repo(project):
    """The project as a git repository that tracks its inspection, with a second branch and a patch. Where git is
    not installed (the torch-free lanes' roots), a ``.git`` folder: all the hook looks at is where the tree is."""
    def git(*args):
        subprocess.run(["git", "-C", str(project), *args], check=True, capture_output=True,
                       env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                            "GIT_COMMITTER_EMAIL": "t@t"})
    if shutil.which("git") is None:
        (project / ".git").mkdir()
    else:
        git("init", "-q", "-b", "main")
        git("add", "out/inspection")
        git("commit", "-q", "-m", "review")
        git("branch", "other")
    (project / "fix.diff").write_text("--- a/x\n+++ b/x\n@@ -0,0 +1 @@\n+x\n")
    return project


@pytest.mark.parametrize("command", [
    "git checkout other", "git switch other", "git merge other", "git rebase other", "git pull", "git pull origin main",
    "git cherry-pick abc123", "git revert HEAD", "git reset --hard HEAD~1", "git stash pop", "git apply fix.diff",
    "git am fix.diff", "patch -p1 -i fix.diff", "patch -p1 < fix.diff", "git -C . checkout other",
])
def test_writers_that_name_no_target_write_the_whole_tree(repo, command):
    """A branch switch, a merge, a rebase, a pull, a cherry-pick, `git apply`, `patch`: the files they write are
    named nowhere in the command, so the tree they write is what counts, and this one holds the inspection."""
    out = call("Bash", {"command": command}, cwd=str(repo / "out"))
    assert out.returncode == 2 and "denied" in out.stderr, (command, out.stderr)


def test_git_commands_that_only_read_stay_allowed_in_that_repository(repo):
    for command in ("git status", "git log --oneline -3", "git diff other", "git stash list", "git show HEAD:x",
                    "git checkout -b feature", "git switch -c feature", "git reset --soft HEAD", "git reset HEAD x"):
        out = call("Bash", {"command": command}, cwd=str(repo))
        assert out.returncode == 0 and not out.stderr, (command, out.stderr)


@pytest.mark.parametrize("command", [
    "python3 -c \"import os; os.rename(os.path.expanduser('~/.config'), '/tmp/c')\"",
    "python3 -c \"import shutil; shutil.rmtree('{home}/.config')\"",
    "tar --remove-files -cf /tmp/c.tar ~/.config",
    "zip -m -r /tmp/c.zip ~/.config",
    "perl -e 'rename \"{home}/.config\", \"/tmp/c\"'",
    "busybox mv ~/.config /tmp/c",
    "busybox rm -rf {home}",
    "rsync -a --remove-source-files ~/.config/ /tmp/c/",
    "cd ~ && python3 -c \"import os; os.rename('.config', '/tmp/c')\"",
])
def test_a_folder_above_the_signers_is_named_by_no_program_but_a_reader(tmp_path, command):
    """The red team moved or emptied a folder above ~/.config/grpo-rlvr with programs off the writer list."""
    home = tmp_path / "home"
    (home / ".config" / "grpo-rlvr").mkdir(parents=True)
    (home / ".config" / "grpo-rlvr" / "allowed_signers").write_text("alice ssh-ed25519 AAAA\n")
    out = call("Bash", {"command": command.format(home=home)}, cwd=str(tmp_path), HOME=str(home),
               XDG_CONFIG_HOME="")
    assert out.returncode == 2 and "denied" in out.stderr, (command, out.stderr)
    assert "a folder above" in out.stderr or "this command writes ~/.config" in out.stderr, out.stderr


@pytest.mark.parametrize("command", ["ls -la ~/.config", "du -sh ~", "cat ~/.config/grpo-rlvr/allowed_signers",
                                     "python3 -c 'print(1)' > /tmp/out.txt", "find ~ -name '*.yaml'"])
def test_readers_may_name_those_folders(tmp_path, command):
    home = tmp_path / "home"
    (home / ".config" / "grpo-rlvr").mkdir(parents=True)
    out = call("Bash", {"command": command}, cwd=str(tmp_path), HOME=str(home), XDG_CONFIG_HOME="")
    assert out.returncode == 0 and not out.stderr, (command, out.stderr)


def test_a_command_it_cannot_read_is_denied_near_a_protected_path(project):
    out = call("Bash", {"command": "head -n \"$N\" out/inspection/samples.jsonl"}, cwd=str(project))
    assert out.returncode == 2 and "cannot read all of it" in out.stderr and "$N" in out.stderr, out.stderr
    out = call("Bash", {"command": "head -n 3 out/inspection/samples.jsonl"}, cwd=str(project))
    assert out.returncode == 0, out.stderr
    out = call("Bash", {"command": "head -n \"$N\" notes.txt"}, cwd=str(project))      # nothing protected near it
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("command", [
    "LD_LIBRARY_PATH=/tmp/lib grpo-rlvr gate out/inspection", "export LD_LIBRARY_PATH=/tmp/lib",
    "OPENSSL_CONF=/tmp/evil.cnf grpo-rlvr train out/run", "env GCONV_PATH=/tmp/g python train.py",
])
def test_loader_and_library_variables_are_not_set(command):
    out = call("Bash", {"command": command})
    assert out.returncode == 2 and "LD_*" in out.stderr, (command, out.stderr)


@pytest.mark.parametrize("tool,tool_input", [
    ("Bash", {"command": "sed -i 's/temperature/t/' .venv/lib/python3.11/site-packages/trl/trainer/grpo_trainer.py"}),
    ("Edit", {"file_path": "/home/u/.venv/lib/python3.11/site-packages/transformers/generation/utils.py",
              "old_string": "a", "new_string": "b"}),
    ("Bash", {"command": "echo x >> /usr/lib/python3/dist-packages/datasets/load.py"}),
    ("Write", {"file_path": "/etc/grpo-rlvr/allowed_signers", "content": "agent ssh-ed25519 AAAA"}),
])
def test_installed_libraries_and_the_system_policy_are_not_written(tool, tool_input):
    out = call(tool, tool_input)
    assert out.returncode == 2 and "denied" in out.stderr, (tool_input, out.stderr)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> Path:
    """A python3 that cannot import the parser: a fresh virtual environment with nothing installed (the hook adds
    only its own site-packages), in a folder of its own to put first on PATH."""
    folder = tmp_path_factory.mktemp("bare")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(folder / "venv")], check=True, timeout=120)
    (folder / "bin").mkdir()
    (folder / "bin" / "python3").symlink_to(folder / "venv" / "bin" / "python")
    return folder / "bin"


def _hook_under(path: str, command: str, cwd: str, **env) -> subprocess.CompletedProcess:
    """The hook as Claude Code runs it, with only ``path`` and the system's folders on PATH."""
    event = {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "cwd": cwd}
    environ = {k: v for k, v in os.environ.items() if k != "GRPO_RLVR_BIN"}
    environ.update(PATH=f"{path}:/usr/bin:/bin", CLAUDE_PLUGIN_ROOT=str(REPO),
                   CLAUDE_PLUGIN_DATA=str(Path(cwd) / ".no-plugin-data"), **env)
    return subprocess.run(["bash", "-c", hook_command()], input=json.dumps(event), capture_output=True, text=True,
                          env=environ, timeout=30)


def test_without_the_parser_plain_commands_are_read_and_the_rest_fails_closed(project, bare_python):
    """No Python with tree-sitter-bash: the hook reads plain commands exactly (the gate's, a reader's) and denies
    anything else near a protected path, saying how to install the parser."""
    where = subprocess.run(["sh", str(REPO / "hooks" / "guard_review.sh"), "--where"], capture_output=True, text=True,
                           env={**os.environ, "PATH": f"{bare_python}:/usr/bin:/bin",
                                "CLAUDE_PLUGIN_DATA": str(project / ".none")}, timeout=30)
    assert f"hook python: {bare_python}/python3" in where.stdout and "parser: none" in where.stdout, where.stdout
    for allowed in ("grpo-rlvr-plugin gate out/inspection --json", "head -n 3 out/inspection/samples.jsonl",
                    "ls -la notes && pytest -q tests", "grpo-rlvr-plugin train out/run > out/run/train.log 2>&1 &"):
        out = _hook_under(str(bare_python), allowed, str(project))
        assert out.returncode == 0 and not out.stderr, (allowed, out.stderr)
    for denied in ("head -n \"$N\" out/inspection/samples.jsonl", "cat $F",
                   "cp /tmp/f $'out/inspectio\\x6e/samples.jsonl'", "(cd out && rm -rf inspection)"):
        out = _hook_under(str(bare_python), denied, str(project))
        assert out.returncode == 2 and "tree-sitter-bash" in out.stderr, (denied, out.stderr)
    out = _hook_under(str(bare_python), "cp /tmp/f out/inspection/samples.jsonl", str(project))
    assert out.returncode == 2 and "this command writes out/inspection/samples.jsonl" in out.stderr, out.stderr


def test_the_launcher_prefers_grpo_rlvrs_interpreter_to_a_python3_without_the_parser(project, bare_python, tmp_path):
    """python3 on PATH lacks the parser; GRPO_RLVR_BIN names a console script whose #! is this environment's
    python: the hook runs under that one and reads as bash does."""
    script = tmp_path / "grpo-rlvr"
    script.write_text(f"#!{sys.executable}\nprint('stand-in')\n")
    script.chmod(0o755)
    where = subprocess.run(["sh", str(REPO / "hooks" / "guard_review.sh"), "--where"], capture_output=True, text=True,
                           env={**os.environ, "PATH": f"{bare_python}:/usr/bin:/bin", "GRPO_RLVR_BIN": str(script)},
                           timeout=30)
    assert f"hook python: {sys.executable}" in where.stdout and "parser: tree-sitter-bash" in where.stdout
    out = _hook_under(str(bare_python), r"cp /tmp/f $'out/inspectio\x6e/samples.jsonl'", str(project),
                      GRPO_RLVR_BIN=str(script))
    assert out.returncode == 2 and "this command writes out/inspection/samples.jsonl" in out.stderr, out.stderr


def test_a_hook_python_that_crashes_or_is_missing_is_a_deny(tmp_path):
    """The launcher turns any exit but 0 and 2 into 2 (Claude Code runs the call otherwise), and denies when there
    is no Python at all."""
    crash = tmp_path / "crash"
    crash.mkdir()
    (crash / "python3").write_text("#!/bin/sh\nkill -SEGV $$\n")
    (crash / "python3").chmod(0o755)
    for folder in (crash, tmp_path / "empty"):
        out = subprocess.run(["/bin/sh", str(REPO / "hooks" / "guard_review.sh")], input="{}", capture_output=True,
                             text=True, env={"PATH": str(folder), "HOME": str(tmp_path),
                                             "CLAUDE_PLUGIN_DATA": str(tmp_path / "none")}, timeout=30)
        assert out.returncode == 2 and "denied" in out.stderr, (folder, out.stderr)


def test_the_signers_anchor_survives_every_command_the_hook_allows(workspace, tmp_path):
    """Each way the red team removed the allowed-signers file, aimed at the one the environment names
    ($XDG_CONFIG_HOME/grpo-rlvr): the hook denies it, or it is allowed and run for real (bash, the real grpo-rlvr)
    and the file is still there, unchanged."""
    from paths import CLI

    xdg = tmp_path / "xdg"
    (xdg / "grpo-rlvr").mkdir(parents=True)
    anchor = xdg / "grpo-rlvr" / "allowed_signers"
    anchor.write_text("alice ssh-ed25519 AAAA\n")
    grpo = " ".join(CLI)
    brief = workspace / "brief.yaml"
    commands = [f"{grpo} inspect {brief} --out {xdg}/grpo-rlvr", f"{grpo} inspect {brief} --out {xdg}",
                f"{grpo} merge {workspace}/model --out {xdg}/grpo-rlvr --force",
                f"{grpo} diagnose {workspace} --apply {anchor}", f"{grpo} preflight {brief} --filter {anchor}",
                f"{grpo} render {brief} --out {xdg}/grpo-rlvr", f"{grpo} diagnose {workspace} --out {xdg}/grpo-rlvr",
                f"python3 -c \"import os; os.rename('{xdg}', '{tmp_path}/moved')\"",
                f"tar --remove-files -cf {tmp_path}/c.tar {xdg}", f"zip -q -m -r {tmp_path}/c.zip {xdg}",
                f"perl -e 'rename \"{xdg}\", \"{tmp_path}/moved\"'", f"busybox mv {xdg} {tmp_path}/moved",
                f"mv {xdg} {tmp_path}/moved", f"rm -rf {xdg}/grpo-rlvr", f"cp /dev/null $'{xdg}/grpo-rlvr/allowed_signer\\x73'",
                f"echo > $\"{anchor}\"", f"D={xdg}; : > $D/grpo-rlvr/allowed_signers"]
    env = hook_env(XDG_CONFIG_HOME=str(xdg))
    allowed = []
    for command in commands:
        out = call("Bash", {"command": command}, cwd=str(workspace), XDG_CONFIG_HOME=str(xdg))
        if out.returncode == 0:
            allowed.append(command)
            subprocess.run(["bash", "-c", command], cwd=workspace, env=env, capture_output=True, timeout=300)
        assert anchor.read_text() == "alice ssh-ed25519 AAAA\n", (command, out.stderr)
    assert all(c.startswith(grpo) for c in allowed), allowed   # only grpo-rlvr's own commands, which refuse
