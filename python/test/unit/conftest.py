import os
import sys

# The checkout's package, unless weft is installed.
sys.path.append(os.path.join(os.path.dirname(__file__), "..", ".."))
