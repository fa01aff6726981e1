"""Speed and scale benchmarks, side by side with Hermes Agent's compressor.

Run ``python -m benchmarks.run [--quick]``; see ``benchmarks/README.md``.
These are not tests: pytest never collects them.
"""
