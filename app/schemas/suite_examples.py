"""Suites shown in ``/docs``: a self-contained quick suite, and the customer-support suite.

Every example runs as prefilled on a fresh server, whatever its workspace roots: suites
bring the files they reference in ``files``, and the YAML bodies (which cannot) reference
none. ``tests/api/test_validate.py`` checks that the customer-support texts equal the files
in ``examples/customer-support/``, so the documentation cannot drift from the examples.
"""

from __future__ import annotations

from typing import Any

import yaml

QUICK_SUITE_YAML = """\
# Two cases for the built-in mock target `default`: as candidate it echoes the last user
# turn; as judge it scores the share of expected_outcome's words found in the answer.
dataset: arithmetic
evalcases:
  - id: add
    expected_outcome: Answers 4.
    input_messages:
      - role: user
        content: "What is 2 + 2? Answers: 4"
  - id: follow-up
    expected_outcome: Answers 6.
    input_messages:
      - role: user
        content: What is 2 + 2?
      - role: assistant
        content: "4"
      - role: user
        content: "And plus 2 more? Answers: 6"
    execution:
      evaluators:
        - name: mentions_six
          type: contains
          value: "6"
        - name: judge
          type: llm_judge
"""
"""A suite that needs no file and passes on the mock target (the YAML body of ``/docs``)."""

QUICK_SUITE: dict[str, Any] = yaml.safe_load(QUICK_SUITE_YAML)

COMPARISON_TARGETS = ("default", "terse", "slow")
"""The mock targets of a fresh server (``comparison_mock_targets``): the arms of ``/docs``."""

CUSTOMER_SUPPORT_SUITE_PATH = "examples/customer-support/customer-support.yaml"
REFUND_POLICY_PATH = "examples/customer-support/policies/refunds.md"

CUSTOMER_SUPPORT_SUITE = """\
$schema: agentv-eval-v2
description: >-
  Customer support for Northwind Outfitters. Multi-turn conversations in which the agent
  must apply the refund policy correctly, including facts that arrive mid-conversation as
  system notes (order lookups, account flags).
dataset: customer-support

thresholds:
  pass: 0.8
  borderline: 0.6

execution:
  evaluators:
    - name: policy_and_tone
      type: llm_judge
      rubrics:
        - id: applies-policy
          description: Applies the refund policy to the facts in the system note.
          weight: 2
        - id: offers-alternative
          description: Offers the alternative the policy allows instead of a flat no.
        - id: tone
          description: Stays warm and brief; no blame, no jargon.
          required: false

evalcases:
  - id: refund-outside-window
    conversation_id: ticket-58213
    expected_outcome: >-
      Politely declines a cash refund because the boots were delivered 41 days ago (the
      window is 30 days), offers store credit for the worn-item exchange the policy allows,
      and does not promise anything the policy forbids.
    note: The order facts arrive as a system note after the agent says it will look them up.
    input_messages:
      - role: system
        content:
          - type: text
            value: >-
              You are Nora, a support agent for Northwind Outfitters. Be warm, brief and
              exact about policy. Never promise what the policy does not allow.
          - type: file
            value: policies/refunds.md
      - role: user
        content: >-
          Hi! I'd like to return the hiking boots from order NW-48213. They pinch after a
          few miles.
      - role: assistant
        content: Sorry to hear they pinch! Let me pull up order NW-48213.
      - role: system
        content: >-
          Order lookup: NW-48213, Ridgeline hiking boots, delivered 2025-09-28 (41 days
          ago). Worn outdoors according to the customer. Account: standard tier, no prior
          returns.
      - role: user
        content: So can I get my money back?
    expected_messages:
      - role: assistant
        content: >-
          I'm sorry, I can't refund the boots to your card: refunds are available for 30
          days after delivery, and they arrived 41 days ago. What I can do is a comfort
          exchange as store credit for the full price, $189, which you can use on a
          different size or model. Would you like me to set that up?
    evaluators:
      - name: policy_and_tone
        type: llm_judge
        rubrics:
          - id: declines-refund
            description: Declines the cash refund and gives the 30-day window as the reason.
            weight: 2
          - id: offers-credit
            description: Offers the comfort exchange as store credit.
          - id: no-false-promise
            description: Does not promise a refund, an exception or a manager override.
      - name: mentions_store_credit
        type: regex
        value: "[Ss]tore [Cc]redit"

  - id: damaged-on-arrival
    conversation_id: ticket-58377
    expected_outcome: >-
      Apologises, offers a free replacement or a full refund for the damaged item without
      asking the customer to ship it back first, and asks which they prefer.
    input_messages:
      - role: system
        content:
          - type: text
            value: You are Nora, a support agent for Northwind Outfitters.
          - type: file
            value: policies/refunds.md
      - role: user
        content: My tent arrived with a snapped pole. Order NW-48377.
      - role: system
        content: >-
          Order lookup: NW-48377, Cirrus 2 tent, delivered yesterday. Carrier damage claim
          open.
      - role: user
        content: I'm leaving for a trip on Friday. What can you do?
    expected_messages:
      - role: assistant
        content: >-
          I'm so sorry the pole snapped! Since it arrived damaged, you don't need to send
          anything back first: I can ship a replacement tent today by express so it
          reaches you before Friday, or refund the full amount to your card. Which would
          you prefer?
"""
"""Text of ``examples/customer-support/customer-support.yaml``."""

REFUND_POLICY = """\
# Northwind Outfitters refund policy (staff copy)

1. **Refund window.** Unused or lightly used items can be refunded to the original payment
   method within 30 days of delivery.
2. **Comfort exchange.** Footwear worn outdoors cannot be refunded, but within 60 days of
   delivery it can be exchanged as store credit for the full price paid.
3. **Damaged on arrival.** Items damaged in transit are replaced or refunded in full, at
   the customer's choice. Do not ask the customer to return the damaged item first.
4. **Express shipping** of replacements is free when the customer has a dated need.
5. Agents may not grant exceptions to rules 1-2; escalate requests for exceptions to a
   team lead without promising an outcome.
"""
"""Text of ``examples/customer-support/policies/refunds.md``."""


def validate_examples() -> dict[str, Any]:
    """Named OpenAPI examples of a ``/validate`` JSON body (none needs a workspace root)."""
    return {
        "suite_object": {
            "summary": "A multi-turn support suite as an object, its policy file inline",
            "value": {
                "suite": yaml.safe_load(CUSTOMER_SUPPORT_SUITE),
                "files": {"policies/refunds.md": REFUND_POLICY},
            },
        },
        "suite_yaml_text": {
            "summary": "The same suite as YAML text",
            "value": {
                "suite": CUSTOMER_SUPPORT_SUITE,
                "files": {"policies/refunds.md": REFUND_POLICY},
            },
        },
        "quick_suite": {
            "summary": "Two cases that need no file",
            "value": {"suite": QUICK_SUITE},
        },
    }
