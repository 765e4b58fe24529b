"""The house of a run, from render to launch: ``render`` writes the run folder from a brief, ``lock`` records
what was rendered (``brief.lock.json``), ``plan`` is the launch plan as data, ``check`` is the check before
training, computed in the interpreter ``clean_interpreter`` starts (``_clean_start``), and ``launch`` starts the
run (``grpo-rlvr train``).

Empty on purpose: importing ``grpo_rlvr.run.<module>`` loads that module only, so the trainer can ask
``clean_interpreter`` for the check without loading the rest of the house.
"""
