"""SuperKernel fusion: the JIT SK source generator (issue 7) and, alongside, scope planning.

``generate.generate_superkernel`` turns an :class:`~skdbg.codegen.fusion.model.SkRequest` into the
SK C++ source, its compiled JSON and the compile flags (codegen spec Part 2).
"""
