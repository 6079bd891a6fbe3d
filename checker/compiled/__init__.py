"""The compiled explorer: a spec at one parameter point lowered to C, searched by a BFS in C."""
