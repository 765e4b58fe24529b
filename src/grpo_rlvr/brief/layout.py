"""The brief's ``hardware`` section as a layout of nodes and GPUs: its defaults, the layouts refused, and the
layout in words (``validate`` prints it).

One node: vLLM's server (server mode) on GPUs 0..vllm_gpus-1, training on the rest. Several nodes in server mode,
as TRL documents multi-node GRPO: node 0 is a dedicated generation node (``vllm serve`` on all its GPUs, tensor
× data parallel) and the other nodes train on every GPU (``accelerate launch``, one machine rank each). Several
nodes without a server (vLLM colocated, or no vLLM): every node trains on every GPU. A layout that leaves a GPU
idle is refused, with the field and the fix.
"""

from __future__ import annotations

from grpo_rlvr.brief.types import Hardware


def _raw_grpo(data: dict) -> dict:
    grpo = data.get("grpo")
    return grpo if isinstance(grpo, dict) else {}


def default_vllm_gpus(hw: dict, grpo: dict, accelerator: str, num_gpus: int, num_nodes: int) -> int:
    """GPUs for a vLLM server when the brief does not say: none on CPU, on one GPU, or when the brief's grpo
    asks for no vLLM or for colocate; all of node 0 on several nodes (the generation node); else one."""
    if accelerator == "cpu" or grpo.get("use_vllm") is False or grpo.get("vllm_mode") == "colocate":
        return 0
    if num_nodes > 1:
        return num_gpus
    return 1 if num_gpus > 1 else 0


def attention_heads(config: dict | None) -> tuple[int, int] | None:
    """(attention heads, key/value heads) from a config.json (a vision-language one through its text_config)."""
    if not isinstance(config, dict):
        return None
    cfg = config.get("text_config") if isinstance(config.get("text_config"), dict) else config
    heads = cfg.get("num_attention_heads")
    kv = cfg.get("num_key_value_heads", heads)
    if not (isinstance(heads, int) and isinstance(kv, int) and heads > 0 and kv > 0):
        return None
    return heads, kv


def tp_fits_heads(tp: int, heads: tuple[int, int] | None) -> bool:
    """vLLM splits the attention heads evenly over tensor-parallel ranks, and key/value heads too (or replicates
    them when there are fewer than ranks, which must then be a multiple of them)."""
    if heads is None:
        return True
    q, kv = heads
    return q % tp == 0 and (kv % tp == 0 if tp <= kv else tp % kv == 0)


def _split(hw: dict, vllm_gpus: int, generation_node: bool, heads) -> tuple[int, int]:
    """(tensor parallel, data parallel) of the server: as written, one from the other, or the default: on a
    generation node data parallel over every GPU (throughput; raise tensor parallel for a model one GPU cannot
    hold); on one node, tensor parallel over the vLLM GPUs as far as the heads allow."""
    tp, dp = hw.get("vllm_tensor_parallel"), hw.get("vllm_data_parallel")
    if vllm_gpus < 1:
        return tp or 1, dp or 1
    if tp and dp:
        return tp, dp
    if tp:
        return tp, max(vllm_gpus // tp, 1)
    if dp:
        return max(vllm_gpus // dp, 1), dp
    if generation_node:
        return 1, vllm_gpus
    tp = max(t for t in range(1, vllm_gpus + 1) if vllm_gpus % t == 0 and tp_fits_heads(t, heads))
    return tp, vllm_gpus // tp


def resolve_hardware(data: dict, heads: tuple[int, int] | None = None) -> Hardware:
    """The hardware section with its defaults (``heads``: the model's, when known, for the default split)."""
    hw = data.get("hardware") or {}
    accelerator = hw.get("accelerator") or ("cpu" if hw.get("num_gpus", 1) == 0 else "gpu")
    num_gpus = 0 if accelerator == "cpu" else int(hw.get("num_gpus", 1))
    num_nodes = int(hw.get("num_nodes", 1))
    vllm_gpus = 0
    if accelerator == "gpu":
        vllm_gpus = int(hw.get("vllm_gpus", default_vllm_gpus(hw, _raw_grpo(data), accelerator, num_gpus,
                                                                num_nodes)))
    tp, dp = _split(hw, vllm_gpus, num_nodes > 1 and vllm_gpus > 0, heads)
    return Hardware(accelerator=accelerator, num_gpus=num_gpus, num_nodes=num_nodes, vllm_gpus=vllm_gpus,
                    gpu_type=hw.get("gpu_type"), sharding=hw.get("sharding", "none" if num_gpus <= 1 else "ddp"),
                    cpu_processes=int(hw.get("cpu_processes", 1)) if accelerator == "cpu" else 1,
                    vllm_tensor_parallel=tp, vllm_data_parallel=dp)


def layout_problems(hw: Hardware, written: dict, heads: tuple[int, int] | None) -> list[str]:
    """Layouts that leave a GPU idle or cannot start, each with the field and the fix (``written``: the
    hardware section as the brief has it)."""
    if hw.accelerator != "gpu" or hw.num_gpus < 1:
        return []
    out = []
    split_written = [k for k in ("vllm_tensor_parallel", "vllm_data_parallel") if k in written]
    if hw.vllm_gpus < 1:
        return [f"hardware.{k}: sets the vLLM server's split, but no GPU serves vLLM (vllm_gpus is 0); remove it, "
                "or set vllm_gpus and grpo.vllm_mode: server" for k in split_written]
    if hw.generation_node:
        if hw.vllm_gpus > hw.num_gpus:
            out.append(f"hardware.vllm_gpus: {hw.vllm_gpus} but the generation node has {hw.num_gpus} GPUs "
                       f"(num_gpus, per node); set vllm_gpus: {hw.num_gpus} or remove it")
        elif hw.vllm_gpus < hw.num_gpus:
            out.append(f"hardware.vllm_gpus: {hw.vllm_gpus} of the generation node's {hw.num_gpus} GPUs would leave "
                       f"{hw.num_gpus - hw.vllm_gpus} idle: with {hw.num_nodes} nodes in server mode, node 0 only "
                       f"generates (TRL's multi-node recipe) and {_training_nodes(hw)} train on every GPU; remove "
                       f"vllm_gpus (all {hw.num_gpus} serve) or set vllm_gpus: {hw.num_gpus}, or train on every GPU of "
                       "every node with vllm_gpus: 0 and grpo.vllm_mode: colocate")
    elif hw.num_processes < 1:
        out.append(f"hardware.vllm_gpus: {hw.vllm_gpus} vLLM GPUs leave no GPU for training out of {hw.num_gpus}; "
                   "lower vllm_gpus or add GPUs (or several nodes: one generates, the others train)")
    tp, dp = hw.vllm_tensor_parallel, hw.vllm_data_parallel
    if tp < 1 or dp < 1 or tp * dp != hw.vllm_gpus:
        fits = [t for t in range(1, hw.vllm_gpus + 1) if hw.vllm_gpus % t == 0 and tp_fits_heads(t, heads)]
        out.append(f"hardware.vllm_tensor_parallel × vllm_data_parallel: {tp} × {dp} = {tp * dp}, but the server has "
                   f"{hw.vllm_gpus} GPU(s) (vllm_gpus); the product must equal it, e.g. "
                   + " or ".join(f"{t} × {hw.vllm_gpus // t}" for t in fits[:4]))
    elif not tp_fits_heads(tp, heads):
        q, kv = heads
        fits = [t for t in range(1, hw.vllm_gpus + 1) if hw.vllm_gpus % t == 0 and tp_fits_heads(t, heads)]
        out.append(f"hardware.vllm_tensor_parallel: {tp} does not split the model's {q} attention heads ({kv} "
                   "key/value heads) evenly, so vLLM cannot start; use "
                   + " or ".join(f"vllm_tensor_parallel: {t} with vllm_data_parallel: {hw.vllm_gpus // t}"
                                 for t in fits[-2:]))
    return out


def node_names(first: int, count: int) -> str:
    """``count`` nodes from ``first`` in words: ``node 1``, ``nodes 1-3``."""
    return f"node {first}" if count == 1 else f"nodes {first}-{first + count - 1}"


def _training_nodes(hw: Hardware) -> str:
    return node_names(1 if hw.generation_node else 0, hw.training_nodes)


def _gpus(count: int) -> str:
    return "GPU 0" if count == 1 else f"GPUs 0-{count - 1}"


def describe_layout(hw: Hardware, mode: str | None) -> list[str]:
    """The layout in words, one line per kind of node (``mode``: the brief's vLLM mode, None without vLLM)."""
    if hw.accelerator == "cpu":
        return [f"this machine's CPU, {hw.num_processes} training process(es)"]
    sharding = "" if hw.sharding == "none" else f", {hw.sharding}"
    split = f"tensor parallel {hw.vllm_tensor_parallel} × data parallel {hw.vllm_data_parallel}"
    if hw.generation_node:
        each = (f"trains: accelerate launch on {_gpus(hw.num_gpus)}" if hw.training_nodes == 1 else
                f"train: accelerate launch on {_gpus(hw.num_gpus)} of each (machine ranks 0-{hw.training_nodes - 1})")
        return [f"node 0 generates: vllm serve on {_gpus(hw.vllm_gpus)} ({split})",
                f"{_training_nodes(hw)} {each}, {hw.num_processes} training processes{sharding}; every GPU busy"]
    where = "" if hw.num_nodes == 1 else f" on each of {hw.num_nodes} nodes (machine ranks 0-{hw.num_nodes - 1})"
    if mode == "server":
        return [f"vllm serve on {_gpus(hw.vllm_gpus)} ({split}); training on GPUs {hw.vllm_gpus}-{hw.num_gpus - 1}, "
                f"{hw.num_processes} process(es){sharding}"]
    engine = "vLLM colocated in each training process" if mode == "colocate" else "no vLLM"
    return [f"training on {_gpus(hw.num_gpus)}{where}, {hw.num_processes} process(es){sharding}; {engine}"]
