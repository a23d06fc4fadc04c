"""Built-in task families: every module here is imported when families are first looked up
(tasks/family_index.py), and its `@task_family` classes register themselves; nothing lists them."""
