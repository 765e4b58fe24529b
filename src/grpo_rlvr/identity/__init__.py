"""What a review is bound to: the content of the model and data it read and their resolved commits, never how a
path was spelled (``compute``); content hashes read once and then checked by stat (``hash_cache``); hub snapshots
in the local Hugging Face cache (``hub_cache``); and, when they differ, what changed in words (``changes``)."""

from grpo_rlvr.identity.changes import dataset_changes, model_changes, setting_changes
from grpo_rlvr.identity.compute import dataset_identity, fingerprint, model_identity
from grpo_rlvr.identity.hash_cache import sha256_file

__all__ = ["dataset_changes", "dataset_identity", "fingerprint", "model_changes", "model_identity", "setting_changes",
           "sha256_file"]
