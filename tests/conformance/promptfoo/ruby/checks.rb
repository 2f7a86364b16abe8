# File asserts of ruby.yaml (read by both tools).
require 'helper'

def get_assert(output, context)
  output.include?('world')
end

def scored(output, context)
  output.length / 20.0
end

def graded(output, context)
  wanted = context['config'].fetch('word', '')
  { 'pass' => output.include?(wanted), 'score' => 0.7, 'reason' => "looked for #{wanted}" }
end

def with_vars(output, context)
  output.include?(context['vars']['expected']) && context['prompt'].include?('REPLY')
end

def uses_helper(output, context)
  Helper.shout(output) == output.upcase
end

def broken(output, context)
  raise ArgumentError, 'this grader is broken'
end

def json_output(output, context)
  JSON.parse(output)['age'] > 30
end

# A class method, named as Grader.check
class Grader
  def self.check(output, context)
    { pass: output.start_with?('Hello'), score: 0.6, reason: 'class method' }
  end
end
