"""Tests for the GRPO memory model (grpo_rlvr.memory): hand-computed values, monotonicity, tactics,
config.json shapes, decode time, the published table and anchors, and the reference doc's code."""

from __future__ import annotations

import ast
import contextlib
import io
import json
import re
from dataclasses import replace
from types import SimpleNamespace

import pytest

from grpo_rlvr.brief.types import Hardware
from grpo_rlvr.errors import ConfigError
from grpo_rlvr.memory import (
    ANCHORS,
    GPU_TYPES,
    SIZE_CLASSES,
    MemoryInputs,
    compare_anchors,
    decode_time,
    estimate_memory,
    fit_tactics,
    format_memory_report,
    inputs_from_brief,
    memory_report,
    memory_table,
    render_table_markdown,
    shape_from_config,
)
from grpo_rlvr.memory.anchors import anchor_value
from grpo_rlvr.memory.hardware import DEVICES, GIB
from paths import REPO

DOC = REPO / "references" / "grpo-memory.md"
SIZES = ["0.5B", "1.5B", "3B", "7B", "8B", "14B", "32B", "70B"]

# A 1B dense model with nothing but the model state: no vLLM, no reference model.
ONE_B = MemoryInputs(params_b=1.0, beta=0.0, use_vllm=False, per_device_train_batch_size=1,
                     gradient_accumulation_steps=1, num_generations=2)


def _server(**kw) -> MemoryInputs:
    """Server mode keeps vLLM off the training GPU, so totals isolate the training side."""
    return MemoryInputs(vllm_mode="server", **kw)


# ---------------------------------------------------------------------------- module hygiene


def test_memory_package_imports_no_heavy_libraries():
    for path in (REPO / "src" / "grpo_rlvr" / "memory").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else (
                [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            for name in names:
                assert name.split(".")[0] not in {"torch", "transformers", "trl", "vllm", "peft"}, (path, name)


def test_modules_stay_small():
    for path in (REPO / "src" / "grpo_rlvr" / "memory").glob("*.py"):
        assert len(path.read_text().splitlines()) < 500, path


# ---------------------------------------------------------------------------- hand-computed


def test_one_billion_full_bf16_adamw_state():
    t = estimate_memory(ONE_B, "80GB").terms
    assert t["weights"] * GIB == pytest.approx(2e9)
    assert t["gradients"] * GIB == pytest.approx(2e9)
    assert t["master_weights"] * GIB == pytest.approx(4e9)
    assert t["optimizer_states"] * GIB == pytest.approx(8e9)
    assert t["reference_model"] == 0


def test_one_billion_variants():
    t = estimate_memory(replace(ONE_B, optimizer="adamw_8bit"), "80GB").terms
    assert t["optimizer_states"] * GIB == pytest.approx(2e9)
    t = estimate_memory(replace(ONE_B, master_weights=False), "80GB").terms
    assert t["master_weights"] == 0 and t["optimizer_states"] * GIB == pytest.approx(4e9)
    t = estimate_memory(replace(ONE_B, beta=0.04), "80GB").terms
    assert t["reference_model"] * GIB == pytest.approx(2e9)


def test_hf_generate_kv_cache_by_hand():
    inp = MemoryInputs(size="7B", use_vllm=False, per_device_train_batch_size=8, gradient_accumulation_steps=4)
    kv_per_token = 2 * 28 * 4 * 128 * 2  # K and V, 28 layers, 4 KV heads of 128, bf16
    expected = 32 * (512 + 1024) * kv_per_token
    assert estimate_memory(inp, "80GB").terms["generation_kv_cache"] * GIB == pytest.approx(expected)


def test_size_class_parameter_counts_match_published_totals():
    published = {"0.5B": 0.49, "1.5B": 1.54, "3B": 3.09, "7B": 7.61, "8B": 8.03, "14B": 14.7, "32B": 32.5,
                 "70B": 70.6}
    for size, billions in published.items():
        assert SIZE_CLASSES[size].total_params() / 1e9 == pytest.approx(billions, rel=0.015), size


# ---------------------------------------------------------------------------- monotonicity


@pytest.mark.parametrize("method", ["full", "lora", "qlora"])
def test_bigger_model_needs_more(method):
    totals = [estimate_memory(_server(size=s, method=method), "141GB").total_gib for s in SIZES]
    assert totals == sorted(totals)


@pytest.mark.parametrize("size", SIZES)
def test_qlora_below_lora_below_full(size):
    full, lora, qlora = (estimate_memory(_server(size=size, method=m), "141GB").total_gib
                         for m in ("full", "lora", "qlora"))
    assert qlora < lora < full


def test_checkpointing_reduces_activations():
    on = estimate_memory(MemoryInputs(size="7B", gradient_checkpointing=True), "80GB")
    off = estimate_memory(MemoryInputs(size="7B", gradient_checkpointing=False), "80GB")
    assert on.terms["activations"] < off.terms["activations"] / 5
    assert on.total_gib < off.total_gib


def test_beta_zero_drops_reference_model():
    assert estimate_memory(MemoryInputs(size="7B", beta=0.01), "80GB").terms["reference_model"] > 0
    assert estimate_memory(MemoryInputs(size="7B", beta=0.0), "80GB").terms["reference_model"] == 0
    # With PEFT, TRL disables the adapter instead of loading a reference copy.
    assert estimate_memory(MemoryInputs(size="7B", method="lora", beta=0.01), "80GB").terms["reference_model"] == 0


def test_zero3_over_more_gpus_reduces_per_device_memory():
    totals = [estimate_memory(_server(size="32B", sharding="zero3", num_gpus=n), "80GB").total_gib
              for n in (1, 2, 4, 8)]
    assert totals == sorted(totals, reverse=True) and totals[-1] < totals[0] / 4


def test_zero2_shards_states_not_weights():
    plain = estimate_memory(_server(size="7B"), "80GB").terms
    zero2 = estimate_memory(_server(size="7B", sharding="zero2", num_gpus=4), "80GB").terms
    assert zero2["weights"] == plain["weights"]
    assert zero2["optimizer_states"] == pytest.approx(plain["optimizer_states"] / 4)


def test_sleep_mode_peak_is_max_of_phases():
    base = MemoryInputs(size="7B", method="lora", vllm_gpu_memory_utilization=0.5)
    awake = estimate_memory(base, "80GB")
    asleep = estimate_memory(replace(base, vllm_enable_sleep_mode=True), "80GB")
    assert asleep.total_gib < awake.total_gib
    assert asleep.total_gib == pytest.approx(max(asleep.phases.values()))
    reservation = awake.terms["vllm_weights"] + awake.terms["vllm_kv_cache"]
    assert reservation == pytest.approx(0.5 * GPU_TYPES["80GB"].memory_gib)


def test_server_mode_holds_no_vllm_memory_on_training_gpus():
    t = estimate_memory(_server(size="7B"), "80GB").terms
    assert t["vllm_weights"] == t["vllm_kv_cache"] == 0


def test_too_small_vllm_reservation_blocks():
    est = estimate_memory(MemoryInputs(size="14B", method="lora"), "80GB")  # 27.5 GiB of weights > 0.3 × 80
    assert not est.fits and est.blocking and "vllm_gpu_memory_utilization" in est.blocking[0]


def test_the_vllm_reservation_advice_is_a_fraction_that_exists():
    """vllm_gpu_memory_utilization is a fraction of the GPU in (0, 1]: advice to raise it is a value that reaches,
    and where even 1.0 is not enough the message says so instead of "at least 5.91"."""
    fits_higher = estimate_memory(MemoryInputs(size="14B", method="lora"), "80GB").blocking[0]
    need = float(re.search(r"raise it to at least (\d+\.\d+)$", fits_higher).group(1))
    assert 0.3 < need <= 1.0
    assert estimate_memory(MemoryInputs(size="14B", method="lora", vllm_gpu_memory_utilization=need), "80GB") \
        .vllm["kv_capacity_seqs"] >= 1                          # the advised value lets vLLM start
    never = estimate_memory(MemoryInputs(size="70B"), "24GB").blocking[0]
    assert "does not fit even at 1.0" in never and "at least" in never and "GiB" in never
    assert not re.search(r"raise it to at least \d", never), never


def test_qlora_vllm_copy_is_nf4():
    lora = estimate_memory(MemoryInputs(size="7B", method="lora"), "80GB").terms["vllm_weights"]
    qlora = estimate_memory(MemoryInputs(size="7B", method="qlora"), "80GB").terms["vllm_weights"]
    assert qlora < lora / 2


def test_qlora_counts_what_train_py_and_trl_load():
    """The rendered train.py runs prepare_model_for_kbit_training (non-4-bit weights upcast to fp32); TRL 1.16
    starts a colocated vLLM with quantization="bitsandbytes" (its own 4-bit copy); `vllm serve` loads bf16."""
    from grpo_rlvr.memory.estimate import (
        KBIT_OTHER_BYTES,
        NF4_BYTES,
        VLLM_BNB_BYTES,
        param_counts,
        vllm_weight_bytes,
    )

    inp = MemoryInputs(size="7B", method="qlora", lora_rank=16)
    pc = param_counts(inp)
    weights = estimate_memory(inp, "24GB").terms["weights"] * 2**30
    assert weights == pytest.approx(pc.layer_linear * NF4_BYTES + pc.other * KBIT_OTHER_BYTES + pc.lora * 4)
    assert vllm_weight_bytes(inp, pc) == pytest.approx(pc.layer_linear * VLLM_BNB_BYTES + pc.other * 2)
    server = MemoryInputs(size="7B", method="qlora", vllm_mode="server")
    assert vllm_weight_bytes(server) == pytest.approx(pc.total * 2)


# ---------------------------------------------------------------------------- tactics

BASE_BRIEF = {"method": "full", "grpo": {}, "hardware": {"num_gpus": 1, "sharding": "none", "vllm_gpus": 0}}


def _apply(changes: dict, method: str = "full") -> SimpleNamespace:
    """A brief (as the memory model reads it) after applying a tactic's changes."""
    merged = json.loads(json.dumps(BASE_BRIEF))
    merged["method"] = method
    for key, value in changes.items():
        if isinstance(value, dict):
            merged[key].update(value)
        else:
            merged[key] = value
    return SimpleNamespace(method=merged["method"], grpo=merged["grpo"], lora={}, hardware=_gpus(**merged["hardware"]))


def _gpus(**hardware) -> Hardware:
    """One node's GPUs as the brief's hardware section resolves them."""
    return Hardware(accelerator="gpu", num_nodes=hardware.pop("num_nodes", 1), gpu_type=None,
                    **{"vllm_gpus": 0, "sharding": "none", **hardware})


def test_7b_full_on_24gb_finds_a_fitting_configuration():
    inputs = MemoryInputs(size="7B", method="full")
    assert not estimate_memory(inputs, "24GB").fits
    tactics = fit_tactics(inputs, "24GB")
    assert tactics
    for tactic in tactics:
        assert tactic.estimate.fits
        assert estimate_memory(tactic.inputs, "24GB").fits
        # The brief change, applied to the brief and mapped back, gives a configuration that fits.
        assert estimate_memory(inputs_from_brief(_apply(tactic.changes), size="7B"), "24GB").fits


def _merge_hardware(changes: dict, inputs: MemoryInputs) -> dict:
    """The tactic's changes on top of the hardware the inputs already describe."""
    hardware = {"num_gpus": inputs.num_gpus, "sharding": inputs.sharding, **changes.get("hardware", {})}
    return {**changes, "hardware": hardware}


def test_tactics_are_brief_changes_with_trl_field_names():
    allowed_grpo = {"gradient_checkpointing", "vllm_enable_sleep_mode", "vllm_gpu_memory_utilization",
                    "per_device_train_batch_size", "gradient_accumulation_steps", "optim", "max_completion_length",
                    "vllm_mode", "vllm_tensor_parallel_size"}
    for size, method, gpu, gpus in [("7B", "full", "80GB", 1), ("70B", "qlora", "80GB", 1), ("32B", "lora", "80GB", 1),
                                    ("7B", "lora", "24GB", 1), ("32B", "full", "80GB", 8)]:
        inputs = MemoryInputs(size=size, method=method, num_gpus=gpus, sharding="zero3" if gpus > 1 else "none")
        for tactic in fit_tactics(inputs, gpu):
            assert set(tactic.changes) <= {"method", "grpo", "hardware"}
            assert set(tactic.changes.get("grpo", {})) <= allowed_grpo
            assert set(tactic.changes.get("hardware", {})) <= {"num_gpus", "sharding", "vllm_gpus"}
            assert tactic.estimate.fits
            brief = _apply(_merge_hardware(tactic.changes, inputs), method)
            assert estimate_memory(inputs_from_brief(brief, size=size), gpu).fits, tactic.changes


def test_batch_tactic_keeps_completions_per_step():
    inputs = MemoryInputs(size="1.5B", method="full", gradient_checkpointing=False, vllm_enable_sleep_mode=True,
                          per_device_train_batch_size=16, gradient_accumulation_steps=2)
    for tactic in fit_tactics(inputs, "80GB"):
        i = tactic.inputs
        assert i.per_device_train_batch_size * i.gradient_accumulation_steps == 32


def test_no_tactics_when_it_fits():
    assert fit_tactics(MemoryInputs(size="0.5B", method="lora"), "80GB") == []


def test_dgx_spark_gets_no_more_hardware_tactics():
    for tactic in fit_tactics(MemoryInputs(size="7B", method="full"), "dgx-spark"):
        assert "hardware" not in tactic.changes


# ---------------------------------------------------------------------------- shapes

QWEN2_7B = {"model_type": "qwen2", "hidden_size": 3584, "num_hidden_layers": 28, "num_attention_heads": 28,
            "num_key_value_heads": 4, "intermediate_size": 18944, "vocab_size": 152064,
            "tie_word_embeddings": False}
QWEN3_MOE = {"model_type": "qwen3_moe", "hidden_size": 2048, "num_hidden_layers": 48, "num_attention_heads": 32,
             "num_key_value_heads": 4, "head_dim": 128, "intermediate_size": 6144, "moe_intermediate_size": 768,
             "num_experts": 128, "num_experts_per_tok": 8, "vocab_size": 151936, "tie_word_embeddings": False}


def test_shape_from_qwen2_config_matches_size_class():
    shape = shape_from_config(QWEN2_7B, name="qwen2.5-7b")
    assert shape.total_params() == SIZE_CLASSES["7B"].total_params()
    assert shape.qkv_bias and shape.kv_dim == 512 and not shape.is_moe


def test_shape_from_moe_configs():
    qwen3 = shape_from_config(QWEN3_MOE)          # Qwen3-30B-A3B: 30.5B total, 3.3B active
    assert qwen3.total_params() / 1e9 == pytest.approx(30.5, rel=0.02)
    assert qwen3.active_params() / 1e9 == pytest.approx(3.3, rel=0.05)
    mixtral = shape_from_config({"hidden_size": 4096, "num_hidden_layers": 32, "num_attention_heads": 32,
                                 "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
                                 "num_local_experts": 8, "num_experts_per_tok": 2})
    assert mixtral.total_params() / 1e9 == pytest.approx(46.7, rel=0.02)   # Mixtral-8x7B
    assert mixtral.active_params() / 1e9 == pytest.approx(12.9, rel=0.03)
    deepseek = shape_from_config({"hidden_size": 2048, "num_hidden_layers": 27, "num_attention_heads": 16,
                                  "intermediate_size": 10944, "moe_intermediate_size": 1408, "n_routed_experts": 64,
                                  "n_shared_experts": 2, "num_experts_per_tok": 6, "first_k_dense_replace": 1,
                                  "vocab_size": 102400})
    assert deepseek.num_experts == 64 and deepseek.num_dense_layers == 1
    assert deepseek.shared_expert_intermediate_size == 2 * 1408
    est = estimate_memory(MemoryInputs(shape=qwen3, method="qlora"), "80GB")
    assert est.terms["weights"] > 0 and est.total_gib > 0


def test_shape_from_vlm_reads_text_config_and_missing_fields_are_all_named():
    shape = shape_from_config({"model_type": "qwen2_5_vl", "text_config": QWEN2_7B})
    assert shape.hidden_size == 3584
    with pytest.raises(ConfigError) as err:
        shape_from_config({"hidden_size": 8})
    assert "num_hidden_layers" in str(err.value) and "vocab_size" in str(err.value)


# ---------------------------------------------------------------------------- decode


def test_dgx_spark_decodes_slower_than_h100_by_the_bandwidth_ratio():
    inputs = MemoryInputs(size="7B", method="lora", vllm_mode="server")
    spark = decode_time(inputs, "dgx-spark", num_prompts=4)["devices"]["dgx-spark"]
    h100 = decode_time(inputs, "h100", num_prompts=4)["devices"]["h100"]
    assert spark["concurrent_sequences"] == h100["concurrent_sequences"] == 32
    ratio = DEVICES["h100"].bandwidth_tbs / DEVICES["dgx-spark"].bandwidth_tbs
    assert spark["generation_phase_s"] / h100["generation_phase_s"] == pytest.approx(ratio, rel=1e-3)
    assert h100["tokens_per_s_single"] / spark["tokens_per_s_single"] == pytest.approx(ratio, rel=1e-2)


def test_decode_batch_shares_weight_reads():
    d = decode_time(MemoryInputs(size="7B", vllm_mode="server"), "h100", num_prompts=8)["devices"]["h100"]
    assert d["tokens_per_s_batch"] > 10 * d["tokens_per_s_single"]


# ---------------------------------------------------------------------------- table, report


def test_published_table():
    sizes, methods, gpus = ["0.5B", "1.5B", "7B", "14B", "32B", "70B"], ["full", "lora", "qlora"], ["24GB", "80GB",
                                                                                                     "141GB"]
    rows = memory_table(sizes, methods, gpus)
    assert len(rows) == 54
    fits = {(r["size"], r["method"], r["gpu"]): r["fits"] for r in rows}
    assert all(fits[("0.5B", m, g)] for m in methods for g in gpus)
    assert not any(fits[("70B", "full", g)] for g in gpus)
    assert fits[("7B", "qlora", "24GB")] and not fits[("7B", "full", "80GB")]
    for s in sizes:
        for m in methods:  # a config that fits a smaller class fits the larger ones
            row = [fits[(s, m, g)] for g in gpus]
            assert row == sorted(row), (s, m)
    md = render_table_markdown(rows)
    assert md.count("\n") == 19 and "| 7B | qlora | ✅" in md


def test_memory_report_is_json_and_renders():
    for inputs, gpu in [(MemoryInputs(size="7B", method="full"), "24GB"),
                        (MemoryInputs(size="14B", method="lora", vllm_mode="server", num_gpus=2,
                                      sharding="zero3"), "80GB")]:
        report = json.loads(json.dumps(memory_report(inputs, gpu)))
        assert {"inputs", "model", "gpu", "estimate", "tactics", "decode", "fits_unchanged_on"} <= set(report)
        text = format_memory_report(report)
        verdict = "FITS" if report["estimate"]["fits"] else "DOES NOT FIT"
        assert f"Verdict on {gpu}: {verdict}" in text


def test_bad_inputs_name_every_problem_and_unknown_gpu_suggests():
    with pytest.raises(ConfigError) as err:
        MemoryInputs(size="9B", method="ful", num_generations=1, vllm_gpu_memory_utilization=1.5)
    message = str(err.value)
    assert "9B" in message and "ful" in message and "num_generations" in message and "utilization" in message
    with pytest.raises(ConfigError, match="Did you mean"):
        estimate_memory(MemoryInputs(size="7B"), "80G")


def test_inputs_from_brief_counts_vllm_gpus_out_of_training_gpus():
    brief = SimpleNamespace(method="lora", lora={"r": 32}, grpo={"vllm_mode": "server", "optim": "adamw_8bit"},
                            hardware=_gpus(num_gpus=4, vllm_gpus=1, sharding="zero3"))
    inputs = inputs_from_brief(brief, size="7B")
    assert (inputs.num_gpus, inputs.vllm_gpus, inputs.lora_rank, inputs.optimizer) == (3, 1, 32, "adamw_8bit")


def test_inputs_from_brief_shard_over_every_training_node_and_size_the_server_at_its_split():
    """Three nodes of 8 GPUs in server mode: node 0 generates (tensor parallel 2 × data parallel 4), nodes 1-2
    train, so ZeRO-3 shards over 16 processes and the server holds half the weights per GPU."""
    brief = SimpleNamespace(method="full", lora={}, grpo={"vllm_mode": "server"},
                            hardware=_gpus(num_gpus=8, num_nodes=3, vllm_gpus=8, sharding="zero3",
                                           vllm_tensor_parallel=2, vllm_data_parallel=4))
    inputs = inputs_from_brief(brief, size="14B")
    assert (inputs.num_gpus, inputs.vllm_gpus, inputs.vllm_tensor_parallel_size) == (16, 8, 2)
    # sharded over 16 processes, not the 8 of one node
    assert estimate_memory(inputs, "80GB").total_gib < estimate_memory(replace(inputs, num_gpus=8), "80GB").total_gib


# ---------------------------------------------------------------------------- anchors


@pytest.mark.parametrize("row", compare_anchors(), ids=lambda r: r["key"])
def test_published_anchor_holds(row):
    assert row["ok"], row


def test_unsloth_gap_is_the_duplicate_vllm_weights():
    anchor = next(a for a in ANCHORS if a.key == "unsloth-8b-qlora")
    est = estimate_memory(anchor.inputs, anchor.gpu)
    assert est.total_gib > anchor.published_gib
    assert est.total_gib - est.terms["vllm_weights"] < anchor.published_gib


def test_verl_full_minimum_needs_offload_in_our_model_too():
    anchor = next(a for a in ANCHORS if a.key == "verl-7b-full")
    no_offload = replace(anchor.inputs, offload_params=False, offload_optimizer=False)
    assert estimate_memory(anchor.inputs, "80GB").fits and not estimate_memory(no_offload, "80GB").fits


def test_unsloth_training_memory_is_bracketed():
    anchor = next(a for a in ANCHORS if a.key == "unsloth-20k-training")
    assert anchor_value(anchor, True) < anchor.published_gib < anchor_value(anchor, False)


# ---------------------------------------------------------------------------- the reference doc


def _python_blocks(text: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


def test_reference_doc_python_blocks_run_and_generated_tables_are_current():
    text = DOC.read_text()
    blocks = _python_blocks(text)
    assert len(blocks) >= 5
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        for block in blocks:
            exec(compile(block, str(DOC), "exec"), {})
    printed = out.getvalue()
    generated = re.findall(r"<!-- generated: ([\w-]+) -->\n(.*?)<!-- end -->", text, flags=re.S)
    assert {name for name, _ in generated} == {"fit-table", "decode-table", "anchors-table"}
    for name, table in generated:
        assert table.strip() in printed, f"{name} in {DOC.name} is stale: rerun its python block"


def test_reference_doc_commands_use_existing_memory_flags():
    flags = {"--size", "--method", "--gpu", "--num-gpus", "--sharding", "--completion-length", "--json"}
    text = DOC.read_text()
    commands = [line for block in re.findall(r"```bash\n(.*?)```", text, flags=re.S) for line in block.splitlines()]
    assert commands
    for line in commands + re.findall(r"`(grpo-rlvr[^`]*)`", text):
        words = line.split()
        assert words[:2] == ["grpo-rlvr", "memory"], line
        assert {w for w in words if w.startswith("--")} <= flags, line
