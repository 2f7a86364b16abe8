"""promptfoo's ``ruby`` asserts (inline code, ``file://`` functions), run with ``ruby`` in the
sandbox; a sandbox runtime without ``ruby`` refuses them by name.

The verdicts were measured against promptfoo 0.123.1 (tests/conformance/promptfoo/ruby.yaml
runs both tools); these pin the contract without promptfoo. ``ruby`` is Debian's package
(scripts/ci_ruby.sh installs it in CI); the tests that run it are skipped without it.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from app.evaluators.code import ruby
from app.evaluators.code.programs import ProgramRunner
from app.evaluators.results import EvaluatorResult
from app.sandbox import Sandbox
from tests.evaluators import test_program_asserts as program_asserts
from tests.suites.helpers import errors_by_path

needs_ruby = pytest.mark.skipif(shutil.which("ruby") is None, reason="ruby is not installed")
CHECKS = """\
require 'helper'

def get_assert(output, context)
  output.include?(context['vars']['word'])
end

def graded(output, context)
  puts 'noise before the result'
  { pass: false, score: 0.25, reason: "wanted #{context['config']['want']}" }
end

def shouted(output, context)
  Helper.shout(output) == 'HELLO'
end

def broken(output, context)
  raise ArgumentError, 'broken on purpose'
end

class Grader
  def self.check(output, context)
    { 'pass' => true, 'score' => 0.6, 'reason' => "class method saw #{output}" }
  end
end
"""
HELPER = "module Helper\n  def self.shout(text) = text.upcase\nend\n"
TURTLES = """\
# Check if output contains specific words
words = ['turtle', 'shell', 'slow']
count = words.count { |word| output.downcase.include?(word) }
{
  'pass' => count >= 1,
  'score' => count / 3.0,
  'reason' => "Found #{count} of #{words.length} turtle-related words"
}
"""


async def grade(
    root: Path, grader: dict[str, Any], answer: str, programs: ProgramRunner | None = None
) -> EvaluatorResult:
    files = {"checks.rb": CHECKS, "helper.rb": HELPER}
    return await program_asserts.grade(root, grader, answer, programs, files)


@needs_ruby
@pytest.mark.parametrize(
    ("grader", "answer", "passed", "score", "reason"),
    [
        ({"value": "output.length > 10"}, "hello there you", True, 1.0, "returned true"),
        ({"value": "output.length > 10"}, "hello", False, 0.0, "returned false"),
        ({"value": "output.include?(context['vars']['word'])"}, "hello", True, 1.0, "true"),
        ({"value": "output.length / 20.0"}, "0123456789", True, 0.5, "returned 0.5"),
        ({"value": "output.length / 20.0", "threshold": 0.6}, "0123456789", False, 0.5, "0.5"),
        ({"value": "JSON.parse(output)['n'] == 2"}, '{"n": 2}', True, 1.0, "returned true"),
        ({"value": TURTLES}, "a slow turtle", True, 2 / 3, "Found 2 of 3 turtle-related words"),
        ({"value": TURTLES}, "a fast hare", False, 0.0, "Found 0 of 3"),
        ({"value": "{'pass' => true, 'score' => 1}"}, "x", False, 0.0, "with all three"),
        ({"value": "'0.7'"}, "x", True, 0.7, "returned 0.7"),
        ({"value": "nil"}, "x", False, 0.0, "nothing (nil/None)"),
        ({"value": "missing_name"}, "x", False, 0.0, "NameError: undefined local variable"),
        ({"value": "def broken("}, "x", False, 0.0, "SyntaxError"),
        ({"type": "not-ruby", "value": "output.start_with?('he')"}, "hello", False, 0.0, "true"),
        ({"value": "file://checks.rb"}, "hello you", True, 1.0, "returned true"),
        (
            {"value": "file://checks.rb:graded", "config": {"want": "z"}},
            "z",
            False,
            0.25,
            "wanted z",
        ),
        ({"value": "file://checks.rb:shouted"}, "hello", True, 1.0, "returned true"),
        ({"value": "file://checks.rb:Grader.check"}, "hi", True, 0.6, "class method saw hi"),
        ({"value": "file://checks.rb:broken"}, "x", False, 0.0, "ArgumentError: broken on"),
        ({"value": "file://checks.rb:absent"}, "x", False, 0.0, "NoMethodError"),
        ({"value": "file://missing.rb"}, "x", False, 0.0, "LoadError"),
    ],
)
async def test_ruby_asserts_grade_as_promptfoo_does(
    tmp_path: Path, grader: dict[str, Any], answer: str, passed: bool, score: float, reason: str
) -> None:
    result = await grade(tmp_path, {"type": "ruby", **grader}, answer)
    assert (result.status, result.passed) == ("ok", passed)
    assert result.score == pytest.approx(score)
    assert reason in (result.reasoning or "")


@needs_ruby
async def test_a_ruby_program_sees_nothing_outside_its_folder(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("not for graders")
    grader = {"type": "ruby", "value": f"File.read('{secret}') rescue 'hidden'"}
    result = await grade(tmp_path, grader, "x")
    assert result.passed is False
    assert '"hidden"' in (result.reasoning or "")  # the file outside its folder is not there


async def test_a_sandbox_without_ruby_refuses_a_ruby_assert_by_name(tmp_path: Path) -> None:
    empty = Sandbox(path=str(tmp_path / "no-programs"))
    programs = ProgramRunner(roots=(tmp_path,), sandbox=empty)
    for value in ("output.length > 1", "file://checks.rb"):
        result = await grade(tmp_path, {"type": "ruby", "value": value}, "x", programs)
        assert (result.status, result.passed) == ("error", None)
        assert "'ruby' was not found on the sandbox's PATH" in (result.reasoning or "")


def test_inline_ruby_becomes_a_method_as_in_promptfoo() -> None:
    one_line = ruby.inline_source("output.length > 10")
    assert one_line == (
        "require 'json'\n\ndef main(output, context)\n  return output.length > 10\nend\n"
    )
    body = ruby.inline_source("if output\n    true\nend")
    assert "def main(output, context)\n    if output\n        true\n    end\nend\n" in body


async def test_a_ruby_assert_naming_a_file_that_is_no_program_is_refused(
    tmp_path: Path,
) -> None:
    report = await program_asserts.read(tmp_path, {"type": "ruby", "value": "file://notes.txt"})
    refusal = errors_by_path(report)["tests[0].assert[0].value"]
    assert "a ruby assert's file is a Ruby (.rb)" in refusal
