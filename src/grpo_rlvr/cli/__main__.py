"""``python -m grpo_rlvr.cli``: the same as the ``grpo-rlvr`` console script."""

from grpo_rlvr.cli.main import main

raise SystemExit(main())
