"""promptfoo's ``ruby`` asserts: the program made of inline Ruby, and the driver calling Ruby.

Inline code becomes a method ``main(output, context)`` of a program that requires ``json``,
as promptfoo 0.123.1 makes it (measured): a value of one line (no newline) is returned
(``return output.length > 10``); a value of several lines is the method's body, each line
indented like its first indented line (two spaces when none is), so its last expression is
what it returns, or what it ``return``s.

The driver (run with ``ruby`` in the sandbox, ``programs``) reads ``{function, args}`` as JSON
on stdin, ``load``s the file its argument names (with that file's folder on ``$LOAD_PATH``,
so ``require 'helper'`` finds a file beside it) and calls the function at its top level,
``get_assert`` when none is named, or ``Class.method`` for a class method; the value goes
back as JSON after a mark, anything the code printed before it. An exception (a syntax error,
a missing method or file, ``exit``) is reported as ``{__threw}``: the assert fails, as
promptfoo fails it.
"""

from __future__ import annotations

import json
import re

DRIVER_FILE = "promptfoo_assert_driver.rb"
SOURCE_FILE = "promptfoo_assert_source.rb"
DEFAULT_INDENT = "  "
_INDENT = re.compile(r"^(?!\s*$)\s+", re.MULTILINE)


def driver(mark: str) -> str:
    """The driver's source; its result line starts with ``mark``."""
    return f"""\
require 'json'
$stdin.set_encoding(Encoding::UTF_8)
request = JSON.parse($stdin.read)
script = ARGV[0]
folder = File.dirname(File.absolute_path(script))
$LOAD_PATH.unshift(folder) unless $LOAD_PATH.include?(folder)
begin
  load script
  name = request['function'].to_s.empty? ? 'get_assert' : request['function']
  owner, dot, member = name.partition('.')
  returned = if dot.empty?
    send(name, *request['args'])
  else
    Object.const_get(owner).public_send(member, *request['args'])
  end
  text = JSON.generate(returned.nil? ? {{ '__undefined' => true }} : returned)
rescue Exception => error
  text = JSON.generate({{ '__threw' => "#{{error.class}}: #{{error.message}}" }})
end
$stdout.write("\\n" + {json.dumps(mark)} + text)
"""


def inline_source(code: str) -> str:
    """The program promptfoo makes of inline Ruby: ``main(output, context)`` (see the module)."""
    if "\n" not in code:
        return f"require 'json'\n\ndef main(output, context)\n{DEFAULT_INDENT}return {code}\nend\n"
    found = _INDENT.search(code)
    indent = found.group(0) if found else DEFAULT_INDENT
    body = "\n".join(f"{indent}{line}" for line in code.split("\n"))
    return f"require 'json'\n\ndef main(output, context)\n{body}\nend\n"
