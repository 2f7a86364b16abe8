import sys

sys.stdin.read()
print("all good")
