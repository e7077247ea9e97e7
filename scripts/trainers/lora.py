#!/usr/bin/env python3
"""LoRA adapter training on a GPU with PyTorch and PEFT, run by the llmgw agent.

    python3 scripts/trainers/lora.py --data pairs.ndjson --out DIR --base MODEL --params '{"rank":16,"epochs":6}' [--gguf]

Speaks the agent's progress protocol on stdout, one JSON object a line (see standin.ts):
start {steps}, step {step, steps, loss, peak_memory_mib}, done {artifact, bytes}, error {message}.
The agent pins the GPU with CUDA_VISIBLE_DEVICES; the data is {"q":..., "a":...} a line, checked
by the control plane before it gets here.
"""
import argparse
import json
import math
import os
import subprocess
import sys


def emit(**o):
    sys.stdout.write(json.dumps(o) + "\n")
    sys.stdout.flush()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--base", required=True)
    ap.add_argument("--params", default="{}")
    ap.add_argument("--gguf", action="store_true")
    a = ap.parse_args()
    p = json.loads(a.params)
    rank = int(p.get("rank", 16))
    epochs = int(p.get("epochs", 3))
    batch = int(p.get("batch_size", 4))
    lr = float(p.get("learning_rate", 2e-4))
    max_len = int(p.get("max_length", 1024))

    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    pairs = [json.loads(l) for l in open(a.data, encoding="utf-8") if l.strip()]
    tok = AutoTokenizer.from_pretrained(a.base)
    if tok.pad_token is None:
        tok.pad_token = tok.eos_token
    model = AutoModelForCausalLM.from_pretrained(a.base, torch_dtype=torch.bfloat16, device_map={"": 0})
    model.gradient_checkpointing_enable()
    model = get_peft_model(
        model,
        LoraConfig(r=rank, lora_alpha=int(p.get("alpha", rank * 2)), lora_dropout=float(p.get("dropout", 0.05)),
                   target_modules=p.get("target_modules", ["q_proj", "k_proj", "v_proj", "o_proj"]), task_type="CAUSAL_LM"),
    )

    def encode(pair):
        if getattr(tok, "chat_template", None):
            prompt = tok.apply_chat_template([{"role": "user", "content": pair["q"]}], tokenize=False, add_generation_prompt=True)
        else:
            prompt = pair["q"] + "\n"
        full = prompt + pair["a"] + (tok.eos_token or "")
        ids = tok(full, truncation=True, max_length=max_len)["input_ids"]
        n_prompt = len(tok(prompt, truncation=True, max_length=max_len)["input_ids"])
        labels = [-100] * n_prompt + ids[n_prompt:]
        return ids, labels[: len(ids)]

    examples = [encode(x) for x in pairs]
    steps = epochs * max(1, math.ceil(len(examples) / batch))
    emit(event="start", steps=steps)
    opt = torch.optim.AdamW([x for x in model.parameters() if x.requires_grad], lr=lr)
    torch.cuda.reset_peak_memory_stats()
    model.train()
    step = 0
    for _ in range(epochs):
        for i in range(0, len(examples), batch):
            chunk = examples[i : i + batch]
            width = max(len(ids) for ids, _ in chunk)
            ids = torch.tensor([x + [tok.pad_token_id] * (width - len(x)) for x, _ in chunk], device="cuda")
            labels = torch.tensor([y + [-100] * (width - len(y)) for _, y in chunk], device="cuda")
            mask = torch.tensor([[1] * len(x) + [0] * (width - len(x)) for x, _ in chunk], device="cuda")
            loss = model(input_ids=ids, attention_mask=mask, labels=labels).loss
            loss.backward()
            opt.step()
            opt.zero_grad(set_to_none=True)
            step += 1
            emit(event="step", step=step, steps=steps, loss=round(float(loss.item()), 4),
                 peak_memory_mib=int(torch.cuda.max_memory_allocated() // (1024 * 1024)))

    os.makedirs(a.out, exist_ok=True)
    model.save_pretrained(a.out, safe_serialization=True)
    artifact = os.path.join(a.out, "adapter_model.safetensors")
    if a.gguf:
        # llama.cpp's converter, when it is installed beside the trainer.
        conv = os.environ.get("LLMGW_LORA_TO_GGUF", "convert_lora_to_gguf.py")
        gguf = os.path.join(a.out, "adapter.gguf")
        subprocess.run([sys.executable, conv, "--base", a.base, "--outfile", gguf, a.out], check=True, stdout=sys.stderr)
        artifact = gguf
    emit(event="done", artifact=os.path.basename(artifact), bytes=os.path.getsize(artifact))


if __name__ == "__main__":
    try:
        main()
    except Exception as e:  # the agent reads the reason from the last line
        emit(event="error", message=f"{type(e).__name__}: {e}")
        sys.exit(1)
