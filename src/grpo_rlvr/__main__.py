import sys

from grpo_rlvr.cli import main

sys.exit(main())
