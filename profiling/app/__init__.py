"""The logic behind the Streamlit pages: kept out of `pages/` so it is typed and tested directly.

Pure functions (no Streamlit):
- `bundles`: the committed results/<device>-<date>/ folders, found and loaded.
- `tables`: every table the pages show.
- `kernel_facts`: a catalog entry's summary, diff and compile facts (Kernels page).
- `text`: Markdown-escaped user text.

Streamlit:
- `gpu_queue`: one GPU job at a time across all browser sessions (queue, progress, cancel).
- `ui`: the helpers every page shares (cached loaders, banners, job panel, safe text).
Figures live in `profiling.charts`, ceilings and launch configurations in `profiling.analysis`.
"""
