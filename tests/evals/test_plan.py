"""`ctxprobe plan`: cache budgets from config.json, checked against published figures.

The Ling fixture (fixtures/ling_3_1_flash.json) is written from the published Ling-3.1-flash config
facts: 72 layers, every 8th gated MLA (9) and the rest KDA (63); hidden 4096; 64 heads; head_dim 128;
kv_lora_rank 512; qk_rope_head_dim 64; qk_nope_head_dim 128; v_head_dim 128; q_lora_rank 1536;
max_position_embeddings 262144; rope_theta 6e6; no rope_scaling; 512 experts, 8 active, 1 shared,
first 4 layers dense; one MTP layer. Its key names follow the `bailing_hybrid` configs of Ling 3.0
(`BailingMoeV3ForCausalLM`: `layer_group_size`, `short_conv_kernel_size`, the DeepSeek MLA keys);
`num_key_value_heads` and `vocab_size` are carried over from those configs, not from the 3.1 card.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from ctxprobe.evals.cli.main import main
from ctxprobe.evals.plan.budget import KindBudget, LayoutBudget
from ctxprobe.evals.plan.specs import LayerKind
from ctxprobe.evals.plan.units import parse_size
from ctxprobe.tasks.errors import UserError

FIXTURES = Path(__file__).parent / "fixtures"
ROOT = Path(__file__).resolve().parents[2]
LING = FIXTURES / "ling_3_1_flash.json"
GPU = ["--gpus", "8", "--gpu-mem", "141GB", "--util", "0.85", "--weights", "573.8GB"]
LONG = ["262144", "1000000"]


def plan(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["plan", *args])
    out, err = capsys.readouterr()
    return code, out, err


def plan_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    code, out, err = plan(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


def at(entries: list[dict[str, int]], tokens: int, field: str = "bytes") -> int:
    return next(entry[field] for entry in entries if entry["tokens"] == tokens)


def gb(num_bytes: int) -> str:
    return f"{num_bytes / 1e9:,.2f}"


def kind(report: dict[str, Any], prefix: str) -> dict[str, Any]:
    return next(k for k in report["kinds"] if k["label"].startswith(prefix))


def alternative(report: dict[str, Any], name: str) -> dict[str, Any]:
    return next(a for a in report["alternatives"] if a["name"] == name)


# --- Ling-3.1-flash: the published figures ---------------------------------------------------


def test_ling_bytes_per_token_and_state(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_json(capsys, str(LING))
    mla, kda = kind(report, "MLA"), kind(report, "KDA")
    assert (mla["layers"], kda["layers"]) == (9, 63)
    assert mla["bytes_per_token"] == 9 * (512 + 64) * 2 == 10_368
    assert report["total"]["bytes_per_token"] == 10_368
    assert alternative(report, "all MLA")["bytes_per_token"] == 72 * 576 * 2 == 82_944
    # KDA state: 63 layers x 64 heads x 128 x 128 x 4 bytes (fp32); the conv state is apart.
    assert kda["state_bytes"] == 63 * 64 * 128 * 128 * 4
    assert f"{kda['state_bytes'] / 1e6:.1f}" == "264.2"
    assert kda["state_bytes"] / 2**20 == 252
    assert kda["conv_bytes"] == 63 * 3 * 64 * 128 * 3 * 2
    assert report["total"]["constant_bytes"] == kda["state_bytes"]


def test_ling_totals_at_each_context(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_json(capsys, str(LING), "--contexts", "32k,128k,262144,1m")
    assert report["contexts"] == [32_768, 131_072, 262_144, 1_000_000]
    hybrid = [gb(c["bytes"]) for c in report["total"]["per_sequence"]]
    all_mla = [gb(c["bytes"]) for c in alternative(report, "all MLA")["per_sequence"]]
    assert hybrid == ["0.60", "1.62", "2.98", "10.63"]
    assert all_mla == ["2.72", "10.87", "21.74", "82.94"]


def test_ling_break_even_ratio_and_mha(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_json(capsys, str(LING))
    break_even = report["total"]["break_even_tokens"]
    assert break_even == pytest.approx(264_241_152 / 10_368)
    assert round(break_even, -2) == 25_500
    assert round(report["mla_expanded_over_absorbed"], 2) == 35.56
    mha = alternative(report, "all MHA")  # 64 heads, K 192 + V 128 wide, 72 layers
    assert mha["bytes_per_token"] == 72 * 64 * (192 + 128) * 2
    assert round(mha["bytes_per_token"] / 1e6, 2) == 2.95


def test_ling_expanded_mla_is_35_56_times_absorbed(capsys: pytest.CaptureFixture[str]) -> None:
    expanded = plan_json(capsys, str(LING), "--mla-cache", "expanded")
    assert kind(expanded, "MLA")["bytes_per_token"] == 9 * 64 * (128 + 64 + 128) * 2
    assert round(kind(expanded, "MLA")["bytes_per_token"] / 10_368, 2) == 35.56


def test_ling_gpu_fit(capsys: pytest.CaptureFixture[str]) -> None:
    # "128K / 262K / 1M" in the published fit figures read as 131,072 / 262,144 / 1,000,000 tokens:
    # that reading gives 237 / 129 / 36 (hybrid) and 35 / 17 / 4 (all MLA). Reading 128K as 128,000
    # would give 241 hybrid sequences, and 1M as 1,048,576 would give 34.
    report = plan_json(capsys, str(LING), *GPU, "--contexts", "128k,262144,1m")
    assert report["gpu"]["free_bytes"] == 8 * 141 * 10**9 * 85 // 100 - 573_800_000_000
    hybrid = [f["sequences"] for f in report["total"]["fits"]]
    all_mla = [f["sequences"] for f in alternative(report, "all MLA")["fits"]]
    assert hybrid == [237, 129, 36]
    assert all_mla == [35, 17, 4]
    other = plan_json(capsys, str(LING), *GPU, "--contexts", "128000,1M")
    assert [f["sequences"] for f in other["total"]["fits"]] == [241, 34]


def test_ling_conv_state_counts_only_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_json(capsys, str(LING), *GPU, "--include-conv", "--contexts", "128k")
    conv = report["total"]["conv_bytes"]
    assert report["total"]["constant_bytes"] == 264_241_152 + conv
    assert at(report["total"]["per_sequence"], 131_072) == 10_368 * 131_072 + 264_241_152 + conv
    assert report["total"]["fits"][0]["sequences"] == 235


def test_ling_mtp_layer_is_mla(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_json(capsys, str(LING), "--include-mtp")
    assert report["mtp_layers_counted"] == 1
    assert report["total"]["layers"] == 73
    assert report["total"]["bytes_per_token"] == 10 * 576 * 2
    assert alternative(report, "all MLA")["bytes_per_token"] == 73 * 576 * 2


def test_layer_pattern_overrides_the_config(capsys: pytest.CaptureFixture[str]) -> None:
    same = plan_json(capsys, str(LING), "--layer-pattern", "KKKKKKKM")
    assert same["kinds"] == plan_json(capsys, str(LING))["kinds"]
    denser = plan_json(capsys, str(LING), "--layer-pattern", "kkkm")
    assert kind(denser, "MLA")["layers"] == 18
    assert denser["layout"] == "--layer-pattern KKKM"


# --- other config conventions ------------------------------------------------------------------


def test_gqa_llama(capsys: pytest.CaptureFixture[str]) -> None:
    # 32 layers x 8 KV heads x head_dim 128 (hidden 4096 / 32 heads) x K and V x bf16.
    report = plan_json(capsys, str(FIXTURES / "llama_3_1_8b.json"))
    assert report["total"]["bytes_per_token"] == 32 * 8 * 128 * 2 * 2 == 131_072
    assert report["total"]["break_even_tokens"] is None
    assert alternative(report, "all MHA")["bytes_per_token"] == 4 * 131_072
    fp8 = plan_json(capsys, str(FIXTURES / "llama_3_1_8b.json"), "--cache-dtype", "fp8")
    assert fp8["total"]["bytes_per_token"] == 65_536


def test_gemma3_sliding_and_global(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    report = plan_json(capsys, str(FIXTURES / "gemma3_4b.json"), "--contexts", "512,1024,32k")
    sliding, full = kind(report, "sliding window"), kind(report, "full attention")
    per_layer = 4 * 256 * 2 * 2  # 4 KV heads x head_dim 256 x K and V x bf16
    assert (sliding["layers"], full["layers"]) == (29, 5)  # global where (i + 1) % 6 == 0
    assert sliding["window"] == 1024
    assert at(sliding["cache"], 32_768) == at(sliding["cache"], 1024) == 29 * per_layer * 1024
    assert at(sliding["cache"], 512) == 29 * per_layer * 512
    assert report["total"]["bytes_per_token"] == 5 * per_layer
    assert at(report["total"]["per_sequence"], 32_768) == 5 * per_layer * 32_768 + 29 * per_layer * 1024
    assert alternative(report, "all full attention")["bytes_per_token"] == 34 * per_layer

    # The newer spelling (`layer_types`) gives the same layout.
    config = json.loads((FIXTURES / "gemma3_4b.json").read_text())
    text = config["text_config"]
    del text["sliding_window_pattern"]
    text["layer_types"] = ["full_attention" if (i + 1) % 6 == 0 else "sliding_attention" for i in range(34)]
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    assert plan_json(capsys, str(path), "--contexts", "512,1024,32k")["kinds"] == report["kinds"]


def test_qwen3_next_gated_delta_net(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_json(capsys, str(FIXTURES / "qwen3_next_80b_a3b.json"))
    gdn, full = kind(report, "GatedDeltaNet"), kind(report, "full attention")
    assert (gdn["layers"], full["layers"]) == (36, 12)
    assert full["bytes_per_token"] == 12 * 2 * 256 * 2 * 2
    assert gdn["state_bytes"] == 36 * 32 * 128 * 128 * 4  # value heads x key dim x value dim, fp32
    assert gdn["conv_bytes"] == 36 * (2 * 16 * 128 + 32 * 128) * 3 * 2  # q, k, v channels x (kernel - 1)
    assert report["total"]["break_even_tokens"] == pytest.approx(gdn["state_bytes"] / full["bytes_per_token"])


def test_kimi_linear_numbers_layers_from_one(capsys: pytest.CaptureFixture[str]) -> None:
    report = plan_json(capsys, str(FIXTURES / "kimi_linear_48b_a3b.json"))
    mla, kda = kind(report, "MLA"), kind(report, "KDA")
    assert (mla["layers"], kda["layers"]) == (7, 20)
    assert mla["bytes_per_token"] == 7 * 576 * 2
    assert kda["state_bytes"] == 20 * 32 * 128 * 128 * 4
    assert kda["conv_bytes"] == 20 * 3 * 32 * 128 * 3 * 2


def test_deepseek_v3_mla_and_mtp(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(FIXTURES / "deepseek_v3.json")
    report = plan_json(capsys, path)
    assert report["total"]["bytes_per_token"] == 61 * 576 * 2
    assert report["mtp_layers_in_config"] == 1 and report["mtp_layers_counted"] == 0
    assert [a["name"] for a in report["alternatives"]] == ["all MHA"]
    assert plan_json(capsys, path, "--include-mtp")["total"]["bytes_per_token"] == 62 * 576 * 2
    expanded = plan_json(capsys, path, "--mla-cache", "expanded")
    assert expanded["total"]["bytes_per_token"] == 61 * 128 * (192 + 128) * 2


def test_nemotron_h_mamba_pattern(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    config = {
        "model_type": "nemotron_h",
        "hybrid_override_pattern": "M-M*-M-",
        "num_hidden_layers": 7,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "head_dim": 128,
        "mamba_num_heads": 128,
        "mamba_head_dim": 64,
        "ssm_state_size": 128,
        "n_groups": 8,
        "conv_kernel": 4,
    }
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    report = plan_json(capsys, str(path))
    mamba = kind(report, "Mamba2")
    assert report["cacheless_blocks"] == 3
    assert mamba["layers"] == 3
    assert mamba["state_bytes"] == 3 * 128 * 64 * 128 * 4
    assert mamba["conv_bytes"] == 3 * (128 * 64 + 2 * 8 * 128) * 3 * 2
    assert report["total"]["bytes_per_token"] == 8 * 128 * 2 * 2


def test_break_even_crosses_sliding_windows() -> None:
    def layout(*kinds: KindBudget) -> LayoutBudget:
        return LayoutBudget(name="test", kinds=kinds, include_conv=False)

    sliding = KindBudget("sliding", LayerKind.sliding, 1, bytes_per_token=10, window=100, state_bytes=0, conv_bytes=0)
    full = KindBudget("full", LayerKind.full, 1, bytes_per_token=1, window=None, state_bytes=0, conv_bytes=0)

    def state(num_bytes: int) -> KindBudget:
        return KindBudget("state", LayerKind.linear, 1, 0, None, state_bytes=num_bytes, conv_bytes=7)

    assert layout(sliding, full, state(550)).break_even_tokens() == 50  # 11 bytes/token inside the window
    assert layout(sliding, full, state(2000)).break_even_tokens() == 1000  # 1,100 at 100 tokens, then 1/token
    assert layout(sliding, state(2000)).break_even_tokens() is None  # the window caps the cache at 1,000
    assert layout(sliding, full).break_even_tokens() is None  # no constant state


# --- the table and the JSON carry the same numbers ----------------------------------------------


def table_rows(text: str, first_cell: str) -> list[list[str]]:
    """The cells of every table line that starts with `first_cell` (cells split on 2+ spaces)."""
    rows = []
    for line in text.splitlines():
        if line.startswith(first_cell + "  ") or line == first_cell:
            rows.append([cell for cell in line.split("  ") if cell.strip()])
    return [[cell.strip() for cell in row] for row in rows]


def test_table_and_json_agree(capsys: pytest.CaptureFixture[str]) -> None:
    args = [str(LING), *GPU]
    report = plan_json(capsys, *args)
    code, table, err = plan(capsys, *args)
    assert code == 0 and err == ""
    totals = [gb(c["bytes"]) for c in report["total"]["per_sequence"]]
    kinds_total, what_if_total = table_rows(table, "total")[0], table_rows(table, "this model")[0]
    assert kinds_total[-len(totals) :] == totals == ["0.60", "1.62", "2.98", "10.63"]
    assert kinds_total[2] == f"{report['total']['bytes_per_token']:,}" == "10,368"
    assert what_if_total[-len(totals) :] == totals
    for row in report["kinds"]:
        cells = table_rows(table, row["label"])[0]
        assert cells[-len(totals) :] == [gb(c["bytes"]) for c in row["cache"]]
        assert cells[2] == f"{row['bytes_per_token']:,}"
    fits = table_rows(table, "this model")[1]
    assert fits[1:] == [str(f["sequences"]) for f in report["total"]["fits"]] == ["637", "237", "129", "36"]
    for alt in report["alternatives"]:
        what_if, fit = table_rows(table, f"{alt['name']}: {alt['label']}")[0], table_rows(table, alt["name"])[-1]
        assert what_if[-len(totals) :] == [gb(c["bytes"]) for c in alt["per_sequence"]]
        assert fit[1:] == [str(f["sequences"]) for f in alt["fits"]]
    assert "264.2 MB (252.0 MiB)" in table
    assert f"break-even: {report['total']['break_even_tokens']:,.0f} tokens" in table
    assert "MLA cache expanded / absorbed: 35.56x" in table
    assert "= 385.00 GB for caches" in table


# --- sizes and weights ---------------------------------------------------------------------------


def test_parse_size() -> None:
    assert parse_size("141GB", "--gpu-mem") == 141 * 10**9
    assert parse_size("573.8GB", "--weights") == 573_800_000_000
    assert parse_size("80GiB", "--gpu-mem") == 80 * 2**30
    assert parse_size("1024", "--weights") == 1024
    with pytest.raises(UserError, match="141GB"):
        parse_size("141G", "--gpu-mem")


def test_weights_from_safetensors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for name, size in (("model-00001-of-00002.safetensors", 3_000), ("model-00002-of-00002.safetensors", 5_000)):
        with open(tmp_path / name, "wb") as handle:
            handle.truncate(size)
    (tmp_path / "config.json").write_text("{}")
    gpu = ["--gpus", "1", "--gpu-mem", "1GB", "--util", "1", "--weights-from", str(tmp_path)]
    report = plan_json(capsys, str(LING), *gpu)
    assert report["gpu"]["weights_bytes"] == 8_000
    assert report["gpu"]["free_bytes"] == 10**9 - 8_000


# --- user errors: one line, exit 2 ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([str(FIXTURES / "missing_keys.json")], "missing num_attention_heads, head_dim (or hidden_size)"),
        (["no/such/config.json"], "config file no/such/config.json: no such file"),
        ([str(LING), "--cache-dtype", "int3"], "--cache-dtype 'int3' is not one of bf16, fp16, fp8"),
        ([str(LING), "--state-dtype", "fp8"], "--state-dtype 'fp8'"),
        ([str(LING), "--mla-cache", "latent"], "--mla-cache 'latent'"),
        ([str(LING), "--layer-pattern", "KKXM"], "unknown letters 'X'"),
        ([str(LING), "--layer-pattern", "KKKKM"], "does not tile 72 layers"),
        ([str(FIXTURES / "llama_3_1_8b.json"), "--layer-pattern", "KKKM"], "missing linear_attn_config"),
        ([str(FIXTURES / "llama_3_1_8b.json"), "--layer-pattern", "M"], "missing kv_lora_rank"),
        ([str(LING), "--gpus", "8"], "GPU fit needs"),
        ([str(LING), *GPU[:4], "--util", "1.5", "--weights", "1GB"], "--util '1.5' must be in (0, 1]"),
        ([str(LING), "--contexts", "32q"], "invalid length"),
    ],
)
def test_user_errors(capsys: pytest.CaptureFixture[str], args: list[str], message: str) -> None:
    code, out, err = plan(capsys, *args)
    assert code == 2
    assert out == ""
    assert len(err.splitlines()) == 1 and message in err, err


def test_bad_json_and_unknown_layer_type(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert plan(capsys, str(bad))[0] == 2
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"num_hidden_layers": 2, "layer_types": ["full_attention", "chunked_attention"]}))
    code, _, err = plan(capsys, str(odd))
    assert code == 2 and "layer_types[1] = 'chunked_attention'" in err and "--layer-pattern" in err


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (
            {"model_type": "qwen3_next", "num_hidden_layers": 48, "linear_num_value_heads": 32},
            "missing layer_types (or full_attention_interval); or give --layer-pattern",
        ),
        (
            {"model_type": "bailing_hybrid", "num_hidden_layers": 72, "kv_lora_rank": 512},
            "missing layer_group_size (or layer_types)",
        ),
        (
            {"model_type": "gemma3", "text_config": {"model_type": "gemma3_text", "sliding_window": 1024}},
            "missing text_config.sliding_window_pattern (or layer_types)",
        ),
        (
            {"num_hidden_layers": 4, "linear_attn_config": {"num_heads": 32, "head_dim": 128}},
            "missing linear_attn_config.full_attn_layers (or kda_layers)",
        ),
    ],
)
def test_hybrid_without_a_layout_is_not_guessed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, config: dict[str, Any], message: str
) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps(config))
    code, out, err = plan(capsys, str(path))
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and message in err, err


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ctxprobe.evals.cli.main", "plan", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_subprocess_missing_keys_exit_2_one_line() -> None:
    result = run_cli(str(FIXTURES / "missing_keys.json"))
    assert result.returncode == 2
    assert result.stdout == ""
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and "Traceback" not in result.stderr
    assert lines[0].startswith("ctxprobe: error: ") and "num_attention_heads" in lines[0]


def test_subprocess_table_and_json() -> None:
    table = run_cli(str(LING), *GPU)
    assert table.returncode == 0, table.stderr
    assert table_rows(table.stdout, "this model")[1][1:] == ["637", "237", "129", "36"]
    as_json = run_cli(str(LING), *GPU, "--json")
    report = json.loads(as_json.stdout)
    assert [f["sequences"] for f in report["total"]["fits"]] == [637, 237, 129, 36]
