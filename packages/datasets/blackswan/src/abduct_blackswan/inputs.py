"""What a model is shown for a BlackSwan question.

- **Forecaster**: the pre-event clip only.
- **Detective**: the pre-event clip, then the post-event clip as its related input; the main
  event is never given, so a model cannot see it.
- **Reporter**: the whole video (``video_path``) when the record names it, else the pre-event,
  event and post-event clips in order (the first with the other two as related inputs).

Each clip is a whole file (a video input without time spans: the frame sampler reads it
whole). The input's context is a sentence saying what the clips are, then the question (and, for
Y/N, the hypothesis) for a scoring model; a generating model gets the question, the options and
the instruction as its prompt. With ``setup=text`` the input is the question alone, no video: the
text-only row every video benchmark should report beside the others. The wordings are ours
(the official prompts are not verified) and are part of what results.json records.
"""

from __future__ import annotations

from typing import Literal

from abduct import VisualInput
from abduct_blackswan.clips import Clips

Setup = Literal["video", "text"]
SETUPS = ("video", "text")
INPUT_OPTIONS = {"video": "setup=text", "related": "setup=text"}  # what a model without video is told to pass
VIEW = {
    "Forecaster": "The video shows what happens before an event; what follows is not shown.",
    "Detective": "The first clip shows the beginning of a video and the second its end; what happens in between "
                 "is hidden.",
    "Reporter": "The whole video is shown.",
}
YN_QUESTION = {
    "Detective": "Is the hypothesis still possible, given the beginning and the end of the video?",
    "Reporter": "Is the hypothesis still valid, given the whole video?",
}
MCQ_PROMPT = "Answer with the option's letter from the given choices directly."
YN_PROMPT = "Answer yes or no."


def clip(path: str) -> VisualInput:
    return VisualInput.video(path)


def shown(task: str, clips: Clips, context: str | None = None) -> VisualInput:
    """The clips ``task`` shows (see the module docstring), with ``context``."""
    if task == "Forecaster":
        return VisualInput.video(str(clips.pre), context=context)
    if task == "Detective":
        return VisualInput.video(str(clips.pre), context=context, related=(clip(str(clips.post)),))
    if clips.whole is not None:
        return VisualInput.video(clips.whole, context=context)
    return VisualInput.video(str(clips.pre), context=context,
                             related=(clip(str(clips.event)), clip(str(clips.post))))


def question_input(task: str, clips: Clips, question: str | None, setup: Setup) -> VisualInput:
    """The clips ``task`` shows (``setup=video``), their context the sentence saying what they
    are and ``question``; or ``question`` alone (``setup=text``). A generating model gets the
    question in its prompt instead (``question=None`` here), so that a model which reads no
    context (``random``) still sees what differs from one question to the next."""
    if setup == "text":
        return VisualInput(context=question)
    return shown(task, clips, VIEW[task] if question is None else f"{VIEW[task]}\n{question}")


def yn_question(task: str, hypothesis: str, question: str | None) -> str:
    """The file's question (else ours for ``task``) and the hypothesis."""
    return f"{question or YN_QUESTION[task]}\nHypothesis: {hypothesis}"
