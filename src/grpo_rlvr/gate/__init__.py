"""``grpo-rlvr gate``: the Phase 1 checker over a reviewed inspection."""
