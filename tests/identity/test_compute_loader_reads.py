"""The places an identity leaves out (``identity.compute``: ``.git/``, ``.cache/huggingface/`` and a model folder's
``checkpoint-*/``) are places no loader reads.

One child process builds a model folder, a PEFT adapter folder (holding its tokenizer) and a dataset folder, and a
copy of each with the left-out folders filled with what would change training if it were read: other weights,
another chat template (also as ``additional_chat_templates/default.jinja``), other rows. It then loads both with
the loaders a run uses (transformers' tokenizer and model, peft's adapter, grpo_rlvr's ``load_split`` over
``datasets``) while an audit hook records every path Python opens, lists or globs. Rust code (safetensors,
tokenizers) opens files no audit hook sees, so the loaded objects are compared too: a read there would show as
other weights, another template or other rows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from grpo_rlvr.identity.compute import dataset_identity, local_model_identity

CHILD = r'''
import hashlib, json, os, shutil, sys
from pathlib import Path

tiny, root = Path(sys.argv[1]), Path(sys.argv[2])
import torch
from peft import LoraConfig, PeftModel, get_peft_model
from transformers import AutoModelForCausalLM, AutoTokenizer

from grpo_rlvr.dataset.rows import load_split

OTHER_TEMPLATE = "{% for m in messages %}UNREVIEWED {{ m['content'] }}{% endfor %}"


def other_weights(src, dest):
    model = AutoModelForCausalLM.from_pretrained(src)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(1.0)
    model.save_pretrained(dest)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(src / name, dest / name)
    (dest / "chat_template.jinja").write_text(OTHER_TEMPLATE)
    (dest / "additional_chat_templates").mkdir()
    (dest / "additional_chat_templates" / "default.jinja").write_text(OTHER_TEMPLATE)


def fill_left_out(folder, checkpoint_of=None):
    for place in (".git", ".cache/huggingface/download", ".cache/huggingface"):
        d = folder / place
        d.mkdir(parents=True, exist_ok=True)
        (d / "chat_template.jinja").write_text(OTHER_TEMPLATE)
        (d / "train.jsonl").write_text(json.dumps({"prompt": "UNREVIEWED", "answer": "0"}) + "\n")
        (d / "config.json.metadata").write_text("c1\netag\n1700000000.0\n")
    if checkpoint_of is not None:
        checkpoint_of(folder / "checkpoint-7")


model = root / "clean" / "model"
shutil.copytree(tiny, model)
adapter = root / "clean" / "adapter"
lora = get_peft_model(AutoModelForCausalLM.from_pretrained(model),
                      LoraConfig(r=2, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
lora.save_pretrained(adapter)
AutoTokenizer.from_pretrained(model).save_pretrained(adapter)
data = root / "clean" / "data"
data.mkdir()
(data / "train.jsonl").write_text("".join(json.dumps({"prompt": f"{i}+1=", "answer": str(i + 1)}) + "\n"
                                          for i in range(20)))
for name in ("model", "adapter", "data"):
    shutil.copytree(root / "clean" / name, root / "dirty" / name)


def other_adapter(dest):
    lora2 = get_peft_model(AutoModelForCausalLM.from_pretrained(model),
                           LoraConfig(r=2, target_modules=["q_proj", "v_proj"], init_lora_weights=False))
    lora2.save_pretrained(dest)
    (dest / "chat_template.jinja").write_text(OTHER_TEMPLATE)


fill_left_out(root / "dirty" / "model", lambda d: other_weights(model, d))
fill_left_out(root / "dirty" / "adapter", other_adapter)
fill_left_out(root / "dirty" / "data")

seen = []
recording = False


def hook(event, args):
    if recording and event in ("open", "os.listdir", "os.scandir", "glob.glob") and args:
        p = args[0]
        if isinstance(p, (str, bytes, os.PathLike)):
            seen.append((event, os.path.realpath(os.fsdecode(p))))


sys.addaudithook(hook)


def digest(model):
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        h.update(k.encode() + v.detach().cpu().numpy().tobytes())
    return h.hexdigest()


def load(side):
    base = root / side
    tok = AutoTokenizer.from_pretrained(base / "model")
    policy = AutoModelForCausalLM.from_pretrained(base / "model")
    adapter_tok = AutoTokenizer.from_pretrained(base / "adapter")
    wrapped = PeftModel.from_pretrained(AutoModelForCausalLM.from_pretrained(base / "model"), base / "adapter")
    spec = {"path": str(base / "data"), "local": True, "split": "train", "subset": None, "field": "dataset.path"}
    rows = load_split(spec, "prompt", {})
    chat = [{"role": "user", "content": "2+2="}]
    return {"model": digest(policy), "adapter": digest(wrapped), "config": policy.config.to_json_string(),
            "template": tok.apply_chat_template(chat, tokenize=False),
            "adapter_template": adapter_tok.apply_chat_template(chat, tokenize=False),
            "rows": [dict(r) for r in rows]}


recording = True
out = {side: load(side) for side in ("clean", "dirty")}
recording = False
out["seen"] = sorted(set(seen))
print(json.dumps(out))
'''


def test_no_loader_reads_the_places_an_identity_leaves_out(tmp_path, tiny_model_dir):
    root = tmp_path.resolve()
    done = subprocess.run([sys.executable, "-c", CHILD, str(tiny_model_dir), str(root)], capture_output=True,
                          text=True, timeout=600, env={**os.environ, "HF_DATASETS_CACHE": str(root / "dcache")})
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    seen = [Path(p) for _, p in out["seen"]]
    opened = [Path(p) for event, p in out["seen"] if event == "open"]
    dirty = root / "dirty"
    # the instrument sees the loaders' reads: each folder's own files, and the folder listed for templates
    assert {dirty / "model" / "config.json", dirty / "adapter" / "adapter_config.json",
            dirty / "model" / "tokenizer_config.json"} <= set(seen)
    assert any(p.is_relative_to(dirty / "data") for p in seen)
    left_out = [dirty / k / place for k in ("model", "adapter", "data") for place in (".git", ".cache/huggingface")]
    left_out += [dirty / "model" / "checkpoint-7", dirty / "adapter" / "checkpoint-7"]
    assert [str(p) for p in opened if any(p.is_relative_to(d) for d in left_out)] == []
    # datasets lists a folder's sub-folders (hidden ones too) before it drops hidden names; nothing else does
    listed = {(e, str(Path(p).relative_to(dirty))) for e, p in out["seen"] if any(Path(p).is_relative_to(d)
                                                                                for d in left_out)}
    assert listed <= {("os.scandir", f"data/{place}") for place in (".git", ".cache", ".cache/huggingface",
                                                                   ".cache/huggingface/download")}, listed
    # nothing loaded differs (no Rust read of them either); each row's source column names its own folder
    assert json.loads(json.dumps(out["dirty"]).replace(str(dirty), str(root / "clean"))) == out["clean"]
    assert "UNREVIEWED" not in json.dumps(out["dirty"])
    # and the identities agree with the loaders: the filled places change none of them
    for k in ("model", "adapter"):
        assert local_model_identity(dirty / k)["files"] == local_model_identity(root / "clean" / k)["files"]
    spec = lambda side: type("Spec", (), {"is_local": True, "resolved": str(root / side / "data"), "split": "train",  # noqa: E731
                                          "prompt_column": "prompt", "columns": {}, "prompt": None, "subset": None})
    assert dataset_identity(spec("dirty")) == dataset_identity(spec("clean"))
