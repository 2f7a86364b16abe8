import sys

sys.stdin.read()
print("failing on purpose", file=sys.stderr)
sys.exit(1)
