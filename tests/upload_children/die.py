import os
import sys

sys.stderr.write("Segmentation fault\n")
os._exit(139)
