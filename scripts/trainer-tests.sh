# Sourced by scripts/test-newest.sh and scripts/test-newer-python.sh --trainer: the trainer tests most tied to TRL's
# internals (the other trainer tests run on the pins in the main lane; CI's time budget): every private seam of TRL's
# trainer that grpo-rlvr lists is there (trainer/trl_seams.py), tool calls run at once within a turn, the rollout
# road's trainer (TRL's private generation seams), dynamic sampling (one process, and two over gloo), the review
# audit inside a real training, and a plain TRL script diagnosed.
# shellcheck disable=SC2034
trainer_tests=(tests/trainer/test_trl_seams.py tests/trainer/test_concurrent_tool_calls.py tests/rollout/test_road.py
  tests/trainer/test_dynamic_sampling_runs.py tests/diagnosis/test_plain_trl.py
  "tests/audit/test_live_attacks.py::test_an_honest_run_passes_its_audit_clean")
