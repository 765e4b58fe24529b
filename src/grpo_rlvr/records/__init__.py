"""The run's records: what training writes about itself and what ``watch``, ``diagnose``, ``report`` and the run
check read back. Each module imports only the ground floor and ``identity`` (tests/test_layers.py), never TRL's
trainer: the signed records (``run_key``, ``provenance``, ``checkpoint_ledger``, read together by
``output_audit``), the run check as a value (``checked_run``), one run per folder (``run_outputs``) and one trainer
at a time (``one_trainer``), the samples left unscored (``unscorable``), the watch log (``watch_log``), the rollouts
the review audit compares (``audit_rollouts``), the model card (``model_card``) and the record of a death
(``crash_record``).
"""
