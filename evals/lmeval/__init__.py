"""ctxprobe and lm-evaluation-harness both ways: export a suite's exact prompts as an lm-eval task
directory (or a Hugging Face dataset), and import lm-eval sample logs (ctxprobe's own tasks, RULER
`niah_*`) back into ctxprobe run folders."""
