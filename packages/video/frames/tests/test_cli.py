from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from abduct_testing import main


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_probe(videos: dict[str, Path], capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "video", "probe", "--json", str(videos["counter"]), str(videos["gapped"]))
    assert code == 0
    counter, gapped = (json.loads(line) for line in out.splitlines())
    assert (counter["frames"], counter["duration"], counter["fps"], counter["width"]) == (30, 3.0, 10.0, 32)
    assert gapped["frames"] == 31 and gapped["duration"] > 5


def test_frames_writes_a_contact_sheet(videos: dict[str, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sheet.png"
    code, text, err = _run(capsys, "video", "frames", str(videos["counter"]), "--span", "0,1", "--span", "2,4",
                           "--frames", "3", "--size", "16", "--out", str(out))
    assert code == 0, err
    assert "wrote 6 frames of 2 span(s)" in text
    assert err.startswith("warning: ") and "clipped" in err
    sheet = np.asarray(Image.open(out))
    assert sheet.shape == (16 * 2 + 2, 16 * 3 + 2 * 2, 3)


def test_bad_video_exits_2_with_one_line(videos: dict[str, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    for path in (videos["junk"], tmp_path / "nope.mp4"):
        code, _, err = _run(capsys, "video", "frames", str(path), "--span", "0,1", "--out", str(tmp_path / "x.png"))
        assert code == 2
        assert len(err.strip().splitlines()) == 1 and err.startswith(f"error: {path}: ")
        assert not (tmp_path / "x.png").exists()
    code, _, err = _run(capsys, "video", "frames", str(videos["counter"]), "--span", "2,1", "--out", str(tmp_path / "x.png"))
    assert code == 2 and "START <= END" in err


def test_probe_of_a_stalling_file_ends_at_its_time_limit(stalling: Path) -> None:
    from abduct_testing import fast_one_line_failure

    err = fast_one_line_failure(["video", "probe", "--timeout", "2", str(stalling)], within=30)
    assert err.startswith(f"error: {stalling}: decoding did not finish within 2 s")


def test_probe_refuses_a_fifo_and_an_image_posing_as_a_video(tmp_path: Path) -> None:
    import os

    from abduct_testing import fast_one_line_failure

    fifo = tmp_path / "stuck.mp4"
    os.mkfifo(fifo)
    assert "not a regular file" in fast_one_line_failure(["video", "probe", str(fifo)], within=10)
    png = tmp_path / "still.mp4"
    Image.new("RGB", (16, 16), "red").save(png, format="PNG")
    assert "is an image" in fast_one_line_failure(["video", "probe", str(png)], within=10)


def test_frames_out_pointed_at_a_device_is_refused_and_left_alone(videos: dict[str, Path]) -> None:
    from abduct_testing import fast_one_line_failure

    err = fast_one_line_failure(["video", "frames", str(videos["counter"]), "--span", "0,1", "--frames", "1",
                                 "--out", "/dev/null"], within=30)
    assert "refusing to replace it" in err and Path("/dev/null").is_char_device()
