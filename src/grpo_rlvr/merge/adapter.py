"""``grpo-rlvr merge ADAPTER --out DIR``: a PEFT LoRA adapter folder (what SFT saves) merged into its base, saved
as one plain model folder.

Briefs can name the adapter folder itself: preflight, inspect and training load it on its base. Merging is better
where one set of weights is needed: vLLM loads a model folder, not base + adapter, so sampling with vLLM and
a vLLM server start from merged weights. The base is the one ``adapter_config.json`` names
(``base_model_name_or_path``); the tokenizer is the adapter folder's when SFT saved one there, else the base's.

The folder is written atomically (a temporary folder renamed into place), and an existing ``DIR`` is replaced only
with ``force``. Needs torch, transformers and peft; loads the base in its saved dtype on CPU.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path

from grpo_rlvr.brief.model_probe import adapter_base, folder_problem
from grpo_rlvr.errors import ConfigError, InputFileError
from grpo_rlvr.files import atomic_directory
from grpo_rlvr.protected_targets import refuse_target


@dataclass
class MergeResult:
    adapter: Path
    base: str
    out: Path
    params: int
    seconds: float

    def to_dict(self) -> dict:
        return {"adapter": str(self.adapter), "base": self.base, "out": str(self.out), "params": self.params,
                "seconds": round(self.seconds, 1)}

    def format(self) -> str:
        return (f"Merged {self.adapter} into its base {self.base}: {self.params / 1e6:.3g}M parameters in "
                f"{self.out} ({self.seconds:.0f} s).\nPoint model.name_or_path at {self.out} to sample or serve it "
                "with vLLM.")


def merge_adapter(adapter, out, force: bool = False) -> MergeResult:
    """Merge the LoRA adapter folder ``adapter`` into its base and save the result to ``out``.

    Raises:
        InputFileError: ``adapter`` is not an adapter folder (a model folder, or neither), or its base cannot load.
        ConfigError: ``out`` exists and ``force`` is not set, or ``out`` is the adapter folder itself.
    """
    t0 = time.monotonic()
    refuse_target(out, "--out", replaces=True)
    adapter, out = Path(adapter).resolve(), Path(out).resolve()
    if not adapter.is_dir():
        raise InputFileError(f"{adapter}: not a folder; give the adapter folder SFT saved "
                             "(adapter_config.json + adapter_model.safetensors)")
    base, problem = adapter_base(adapter)
    if problem:
        raise InputFileError(problem)
    if base is None:
        raise InputFileError(folder_problem(adapter) or
                             f"{adapter} holds a model's config.json, not a PEFT adapter: there is nothing to merge; "
                             "use the folder as model.name_or_path as it is")
    if out == adapter or adapter in out.parents:
        raise ConfigError(f"--out {out}: inside the adapter folder; write the merged model elsewhere")
    if out.exists() and not force:
        raise ConfigError(f"--out {out}: exists; choose a new folder, or pass --force to replace it")
    from transformers import AutoModelForCausalLM

    from grpo_rlvr.trainer.model_loading import with_adapter

    try:
        model = AutoModelForCausalLM.from_pretrained(base.resolved, revision=base.revision, dtype="auto")
        merged = with_adapter(model, str(adapter), merge=True)
        tokenizer = _tokenizer(adapter, base)
    except (OSError, ValueError) as e:
        raise InputFileError(f"{adapter}: cannot load it on its base {base.resolved}: {e}") from None
    with atomic_directory(out) as tmp:
        merged.save_pretrained(tmp)
        tokenizer.save_pretrained(tmp)
        (tmp / "merged_from.json").write_text(json.dumps({"adapter": str(adapter), "base": base.resolved,
                                                         "base_revision": base.revision}, indent=2) + "\n")
    return MergeResult(adapter, base.resolved, out, sum(p.numel() for p in merged.parameters()),
                       time.monotonic() - t0)


def _tokenizer(adapter: Path, base):
    from transformers import AutoTokenizer

    from grpo_rlvr.trainer.model_loading import has_tokenizer

    if has_tokenizer(adapter):
        return AutoTokenizer.from_pretrained(adapter)
    return AutoTokenizer.from_pretrained(base.resolved, revision=base.revision)
