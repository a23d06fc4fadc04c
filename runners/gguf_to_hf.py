"""A GGUF as a Hugging Face model folder, for engines that load no GGUF (vLLM 0.32 has no GGUF loader in its
core): the weights dequantized, the tokenizer and chat template kept.

    python -m ctxprobe.runners.gguf_to_hf MODEL.gguf OUT_DIR          (pip install "ctxprobe[convert]" torch)
    python runners/gguf_to_hf.py MODEL.gguf OUT_DIR                    (in vLLM's own venv: it has all four)

It needs torch, transformers, gguf and accelerate (the `convert` extra, torch apart: take the one that suits the
machine) and imports nothing else of ctxprobe, so vLLM's venv can run this file as it is. transformers keeps
GGUF weights in their GGUF blocks unless told to dequantize (`GgufConfig(dequantize=True)`), and such a model
cannot be saved. The folder is written in bfloat16 (SmolLM2-135M-Instruct: 260 MB, about 20 s on 2 cores)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def convert(gguf: Path, out: Path) -> None:
    """Write `out` (config.json, model.safetensors, tokenizer files) from the GGUF file `gguf`."""
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer, GgufConfig

    tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = AutoModelForCausalLM.from_pretrained(
        gguf.parent, gguf_file=gguf.name, dtype=torch.bfloat16, quantization_config=GgufConfig(dequantize=True)
    )
    tokenizer.save_pretrained(out)
    model.save_pretrained(out)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="gguf_to_hf", description="a GGUF as a Hugging Face model folder")
    parser.add_argument("gguf", type=Path, help="the .gguf file")
    parser.add_argument("out", type=Path, help="the folder to write")
    args = parser.parse_args(argv)
    if not args.gguf.is_file():
        print(f"gguf_to_hf: {args.gguf} not found", file=sys.stderr)
        return 2
    try:
        convert(args.gguf.resolve(), args.out)
    except ImportError as err:
        print(f'gguf_to_hf: {err.name or err} is missing: pip install "ctxprobe[convert]" torch', file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
