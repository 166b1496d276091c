"""An explicit chat template for base models whose GGUF carries none."""

from __future__ import annotations

from llama_cpp.llama_chat_format import Jinja2ChatFormatter

from agent.model.llm import GEMMA_TEMPLATE


def test_gemma_turns_fold_the_system_prompt_into_the_first_user_turn() -> None:
    formatter = Jinja2ChatFormatter(template=GEMMA_TEMPLATE, eos_token="<eos>", bos_token="<bos>")
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": '{"say": "Hello!"}'},
        {"role": "user", "content": "thanks "},
    ]
    prompt = formatter(messages=messages).prompt
    assert prompt == (
        "<bos><start_of_turn>user\nBe brief.\n\nhi<end_of_turn>\n"
        '<start_of_turn>model\n{"say": "Hello!"}<end_of_turn>\n'
        "<start_of_turn>user\nthanks<end_of_turn>\n<start_of_turn>model\n"
    )
