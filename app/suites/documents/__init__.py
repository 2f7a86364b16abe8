"""Suite documents: text parsed safely, positioned for messages, ``${{ VAR }}`` filled.

And the findings: every problem found while checking a suite, located in its document.
"""
