"""Who may do what on a shared GEMM Lens server: identities, roles and the one permission check
(profiling.team.roles) that the run store and the GPU queue call, so that no page or command skips it."""
