from typing import Any, Callable, Optional

def run(
    toml_text: str,
    base_dir: str,
    seed: Optional[int] = None,
    progress: Optional[Callable[[float, int], Optional[bool]]] = None,
    progress_every: int = 1_000_000,
    level: Optional[str] = None,
) -> dict[str, Any]: ...
def validate(toml_text: str, base_dir: str) -> None: ...
def schema() -> str: ...
