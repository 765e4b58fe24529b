"""The final save: a single-process run saves as transformers does, and an FSDP run is switched to the full state
dict first (transformers' ``save_model`` under FSDP writes nothing for a sharded one).

accelerate turns FSDP on only for accelerator devices (MULTI_GPU and kin; a CPU run is MULTI_CPU whatever its
config says), so the FSDP case uses a stand-in trainer around accelerate's real FSDP plugin: what cannot exist
on this machine is the GPU. The condition the switch must meet is read from transformers' own source, so a
transformers that changes it fails here."""

from __future__ import annotations

import inspect
from types import SimpleNamespace

from accelerate.utils import FullyShardedDataParallelPlugin
from datasets import Dataset
from transformers import LlamaConfig, LlamaForCausalLM, Trainer, TrainingArguments

from grpo_rlvr.trainer.final_model import gather_for_final_save, save_final_model

# transformers' test in save_model: only this state dict type is ever written under FSDP
TRANSFORMERS_CONDITION = '"FULL_STATE_DICT" in str(self.accelerator.state.fsdp_plugin.state_dict_type)'


def test_transformers_saves_under_fsdp_only_a_full_state_dict():
    assert TRANSFORMERS_CONDITION in inspect.getsource(Trainer.save_model)


def test_a_sharded_fsdp_run_is_gathered_whole_before_the_final_save(tmp_path):
    plugin = FullyShardedDataParallelPlugin(fsdp_version=2, state_dict_type="SHARDED_STATE_DICT")
    seen = []
    trainer = SimpleNamespace(is_fsdp_enabled=True, accelerator=SimpleNamespace(state=SimpleNamespace(fsdp_plugin=plugin)))
    trainer.save_model = lambda out: seen.append((out, str(plugin.state_dict_type)))
    save_final_model(trainer, tmp_path / "final")
    assert seen == [(str(tmp_path / "final"), "StateDictType.FULL_STATE_DICT")]   # meets TRANSFORMERS_CONDITION
    assert gather_for_final_save(trainer) is False   # already full: nothing to change


def test_a_single_process_run_saves_as_before(tmp_path):
    model = LlamaForCausalLM(LlamaConfig(vocab_size=32, hidden_size=16, intermediate_size=32, num_hidden_layers=1,
                                         num_attention_heads=2, num_key_value_heads=1))
    args = TrainingArguments(output_dir=str(tmp_path / "out"), max_steps=1, report_to=[], use_cpu=True,
                             per_device_train_batch_size=2, save_strategy="no")
    data = Dataset.from_dict({"input_ids": [[1, 2, 3]] * 2, "labels": [[1, 2, 3]] * 2})
    trainer = Trainer(model=model, args=args, train_dataset=data)
    assert gather_for_final_save(trainer) is False
    save_final_model(trainer, tmp_path / "final")
    loaded = LlamaForCausalLM.from_pretrained(tmp_path / "final")
    saved, trained = loaded.state_dict(), model.state_dict()
    assert saved.keys() == trained.keys() and all((saved[k] == trained[k]).all() for k in trained)
