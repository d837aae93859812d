"""Drive the simulator with SGLang's own benchmark client (`sglang.benchmark.serving`).

    python lab/studies/sim_sglang_client.py --python /path/to/venv-with-sglang/bin/python

Boots a sim (EAGLE, steps 3, --speedup), builds a tiny local WordLevel tokenizer over
"w0".."w999" (no download; needs `tokenizers` + `transformers` in that interpreter), runs
`--backend sglang --dataset-name random-ids` against it and prints the client's summary
next to the sim's ground truth. Seen working with sglang 0.5.23 + torch 2.13.0 CPU
(a CUDA torchvision wheel needs its fake-op registrations skipped on a CPU torch).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).parent))
from _sim import boot_sim, sglang_serving_argv

TOKENIZER = r"""
import sys
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import PreTrainedTokenizerFast
vocab = {"[PAD]": 0, "[BOS]": 1, "[EOS]": 2}
for i in range(1000):
    vocab.setdefault(f"w{i}", len(vocab))
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="[PAD]"))
tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
fast = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="[PAD]", bos_token="[BOS]",
                               eos_token="[EOS]", unk_token="[PAD]")
fast.save_pretrained(sys.argv[1])
"""


def main() -> int:
    p = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument("--python", default=sys.executable, help="interpreter that has sglang")
    p.add_argument("--speedup", type=float, default=5.0)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--num-prompts", type=int, default=128)
    p.add_argument("--max-concurrency", type=int, default=64)
    p.add_argument("--output-len", type=int, default=1000)
    a = p.parse_args()
    work = Path(tempfile.mkdtemp(prefix="specperf-sim-sglang-"))
    server = boot_sim(a.steps, a.speedup, work / "sim.log")
    url = server.url
    try:
        with tempfile.TemporaryDirectory() as tmp:
            tok_dir = os.path.join(tmp, "tok")
            subprocess.run([a.python, "-c", TOKENIZER, tok_dir], check=True)
            out = os.path.join(tmp, "out.jsonl")
            env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
            serving = sglang_serving_argv(
                a.python, url, tokenizer=tok_dir, model="sim", input_len=64,
                output_len=a.output_len, prompts=a.num_prompts,
                concurrency=a.max_concurrency, output_file=out,
            )  # fmt: skip
            subprocess.run(serving, check=True, env=env)
            result = json.loads(Path(out).read_text().splitlines()[-1])
        gt = httpx.get(url + "/sim/ground_truth", timeout=10).json()
    finally:
        server.stop()
    done = [r for r in gt["requests"] if r["finish_reason"] and not r["aborted"]]
    print("\n--- sglang.benchmark.serving vs sim ground truth ---")
    for key in ("completed", "total_output_tokens", "output_throughput", "accept_length"):
        if key in result:
            print(f"client {key}: {result[key]}")
    print(
        f"sim: {len(done)} requests finished, "
        f"{sum(r['completion_tokens'] for r in done)} completion tokens; "
        f"steps achieved/model {gt['steps']['achieved_over_model']:.4f}"
    )
    print(
        f"client output_throughput / speedup = "
        f"{result.get('output_throughput', 0) / a.speedup:.1f} tok/s (simulated time)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
