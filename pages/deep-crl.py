"""1000-layer RL (Wang et al., NeurIPS 2025): contrastive RL in 2-D mazes, and what depth does to it."""
import toymodels.deep_crl as M
import ui

paper = ui.paper_header(M.TOPIC)
verdict, fresh = ui.shipped_verdict(M.TOPIC)
ui.claims_table(verdict)
