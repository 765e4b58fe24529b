"""``grpo-rlvr preflight``: does the model already succeed sometimes? (RL amplifies, it does not install.)"""
