"""The logic behind the Streamlit pages: kept out of `pages/` so it is typed and tested directly.

- `gpu_queue`: one GPU job at a time across all browser sessions (queue, progress, cancel).
- `data`: bundled measurements, uploads, tables and figures (pure functions, no Streamlit).
- `ui`: the few Streamlit helpers every page shares (cached loaders, banners, safe text).
"""
