"""The sandbox for model-written code, used by the ``unit_tests`` reward (docs/design.md §7).

Processes. Per worker, a supervisor (``isolation.supervisor``), started as a fresh interpreter, holds the samples' data and
judges nothing; before its first request it forks a template (``isolation.template``) that only ever forks, so no
execution inherits another sample's program, tests or results (the warm start stays: no interpreter start-up
per program). Each execution is the supervisor's child (``clone(CLONE_PARENT)``), PID 1 of a PID namespace of
its own where the supervisor owns one, with: wall-clock and CPU limits; address-space, file-size and process
limits; its whole process tree measured every 10 ms and killed past the memory or task cap (``isolation.tree``); a
wall-time budget for all of a sample's executions; its own empty working directory; a scrubbed environment;
and, depending on the machine, either namespaces (network, PID, a read-only file-system jail that shows only
the system and Python directories, never this project's source, and no ``/proc``) or, without them (a default
container), Landlock (files: the same read-only directories and its private working directory; no TCP;
signals and abstract sockets kept in its own domain). In every mode: a uid of its own when run as root (and
Python is readable by it), no capability in any set, no-new-privs, a seccomp filter (``isolation.seccomp``: ptrace,
the keyring, namespaces, mounts, bpf, io_uring, memfd, System V and POSIX IPC, every socket family but
AF_UNIX, AF_VSOCK included, reaching a socket by address, ``bind``, acting on another process by pid, file locks,
leases and inotify, and without the jail metadata changes), ``oom_score_adj`` 1000 (the OOM killer's
first choice; the trainer's own is left alone), a non-dumpable supervisor and template, and the whole tree
killed afterwards: the PID namespace's teardown, which the kernel completes before the execution can be
reaped, or else a subreaper sweep. The execution loads the program, then gets its probes one test at a time
(``isolation.feeder``); the test bodies that Python runs on their own (test functions and methods) run one after
the other in a body runner, a process forked once from the loaded program (again only after a body ended it), as
pytest runs a module's tests; the supervisor measures and sweeps those with the rest of the tree. Where the sandbox lacks the layers
``isolation.policy`` requires (files, signals,
seccomp and the sweep held), it refuses to score (``SandboxError``) unless the caller sets
``allow_degraded_isolation``, which the reward records. Which layers are in effect: ``isolation_layers()``, and
every verdict carries those of its own run; a missing layer is logged with why. Layer names: process, userns, pidns, netns, fs_jail, private_shm, tmpdir, env_scrubbed, uid_drop,
caps_dropped, no_new_privs, landlock_fs, landlock_net, landlock_scope, seccomp, no_file_locks, metadata_frozen, nondumpable, oom_first,
rlimit_cpu, rlimit_as, rlimit_nproc, rlimit_fsize, tree_cap, pgroup_kill, sweep.

Tools (decided on measurements on this 2-CPU machine, Linux 6.18): the seccomp filter is built with
``pyseccomp`` (ctypes bindings of the maintained libseccomp, which knows every architecture's call numbers)
once in the parent and loaded as raw BPF in each child; Landlock and namespaces are our own system calls:
bubblewrap would only wrap each supervisor (+17 ms per start) and drops the capabilities needed to give each
execution a PID namespace, and nsjail forks a process per run, which the warm template exists to avoid.
Throughput (``benchmarks/bench_unit_tests.py``, 190 finishing programs, 2 workers, every layer on): 1.99 ms
per finishing program, the whole corpus in 1.17x the time its looping programs alone must take. Per-test
isolation (``benchmarks/bench_per_test.py --programs 60 --rounds 3 --workers 1``: 57 programs' 228 asserts as an
assert list and as one pytest function each, on this 2-CPU VM shared with other work, niced, at load 0.3-1.7,
eleven runs alternating with the design before): 1.15-1.52x the CPU of the assert list (median 1.29x; 6.4-9.7 ms per
program), against 1.39-2.03x (median 1.59x; 7.6-12.7 ms) before; the same runs' exact count (its "counted exactly"
line: no 10 ms ticks), three of them: 1.19-1.47x against 1.46-1.77x. Runs vary this much with what else the VM's
other core does. The test bodies run one after the other in one body runner forked once per program; a bare fork, exit and wait of the loaded program costs 1.0-1.4 ms of CPU there
(the kernel copying and then freeing the page tables of its ~8 MB of anonymous memory, ~0.04 ms per MB, and
Python's after-fork steps), which puts the floor at 1.2x with one runner. The rest is per runner, not per body
(measured with marks inside the child): the pages the runner writes for the first time (each is copied, ~4 us in
this VM: ~200 for its start and first body, almost none for its later bodies) and the runner's own steps. So the
execution is ended as soon as its last test has answered (the runner never exits and is never reaped on its own),
the runner makes itself a subreaper (a ``ctypes`` call, ~40 pages) only once a body has started a process, it
flushes its output only when it exits, and the first delivery (with its fork request) is queued before the program
has loaded.

Plans are made in a planner process (``judging.planner``), where the test's own code runs; verdicts are decided in this
process (``judging.parent_expr``, ``judging.verdict``): for an assert, only the calls into the
program go to the sandbox, which returns their values as plain data (``judging.plaindata``; a built-in the test
applies to a program value is applied there, with the built-ins as they were before the program ran); comparisons,
expected values and arithmetic stay here, within a CPU budget per sample (``judging.budget``); stdin/stdout cases
are compared here. What is covered,
weak and not covered, each line with the tests in ``tests/sandbox`` that show it:

- covered:
  - nothing of another sample's is readable, in any mode (``test_run_safety::test_a_program_finds_nothing_of_the_samples_before_it``);
  - no test sees a later test's inputs: the probes reach the program one test at a time (the next test's only
    once this one has answered; a frame written before its test was sent or after the next one was is refused);
    the test bodies (pytest functions, unittest methods) run one after the other in the body runner, forked from
    the loaded program, as pytest runs them: a later body sees what earlier ones left, never a later one's inputs,
    and one that ends the runner (a crash, ``os._exit``, a signal, the CPU limit) fails its own test only, the rest
    running in a fresh runner; after each body the runner kills and reaps what it started in its process group
    before the next test is sent; one body's asserts (an assert list, a ``check``) run in order in one process, as
    in Python (``test_feeder``, all tests);
  - expected values and the test's own named values never reach the sandbox (``test_sandbox_plan::test_equality_assert_sends_only_the_call``, ``test_named_and_computed_expected_values_stay_in_the_parent``, ``test_strong_shapes::test_an_expected_value_the_test_names_is_not_in_the_programs_reach``, ``test_adversarial::test_expected_values_are_nowhere_in_the_child``);
  - Python's own types are judged as Python judges them: a ``Counter``, ``defaultdict`` or ``OrderedDict`` compares
    as its dict, a ``namedtuple`` as its tuple, a numpy scalar as its ``.item()``, a keys view as a set, a subclass
    of a built-in as the built-in value it holds (its own ``__eq__`` never runs in the trainer), the type's name kept
    for the reason; a built-in the test applies to a program value (``list(gen(3))``, ``sum(map(...))``,
    ``len(range(n))``, ``sorted(d.keys())``, ``' '.join(genexpr)``, ``len(obj)``) is applied in the sandbox with the
    built-ins as they were before the program ran, and only its result crosses (``test_python_types``, all tests:
    each assert agrees with plain Python, right and wrong programs, four formats);
  - test classes and hooks as pytest and unittest run them: ``self`` a fresh instance of the class per test, state
    kept on it (``self.s = Stack()`` makes ``self.s`` the program's: its values cross, so an object that says yes
    to everything earns nothing), ``setUp``/``setup_method`` and their tear-downs around each test,
    ``setUpClass``/``setup_class`` once per class before its first test (what it sets on the class is one object
    for all the class's tests, a count its methods carry on included; one that raises fails every test of the
    class) and ``tearDownClass``/``teardown_class`` once after its last, ``setup_function``/``setup_module``/
    ``setUpModule``, class constants and the values a class set-up gives kept out of the sandbox
    (``test_plan_classes``, all tests, each suite checked in plain pytest and unittest first);
  - the test bodies run in pytest's order: the module's test functions and classes as written, a pytest class's
    methods as written and a ``TestCase``'s by name (as pytest runs it), a test defined twice once, in one body
    runner, so what a test leaves in the program the next one sees as under plain pytest (``test_plan_code_order``,
    the tests up to ``test_a_test_defined_twice_is_one_test_as_its_last_definition``);
  - ``multiprocessing``: with the jail each execution has a ``/dev/shm`` of its own (``private_shm``), so ``Pool``,
    ``Queue``, ``Lock``, ``Value`` and ``ProcessPoolExecutor`` work, fork being the default start method on every
    Python; without it (a default container) processes, pipes, ``Process`` and ``Pipe`` work, and what needs a POSIX
    semaphore fails with PermissionError: the only ``/dev/shm`` there is shared by every program
    (``test_multiprocessing``, all tests);
  - no channel between programs that run at once: ``flock`` and record locks do nothing (each execution is alone
    with its files), ``F_GETLK``, leases, directory notification and inotify are refused (``no_file_locks``), in
    every mode; nothing outside the working directory changes mode, owner, times or extended attributes: the jail's
    mounts are read-only, and without it the filter makes those calls do nothing (``metadata_frozen``); without
    the jail the supervisor's folder is in the system's shared temp directory, not the trainer's ``TMPDIR``
    (``test_containers::test_no_bit_passes_between_programs_running_at_once``,
    ``test_nothing_outside_the_working_directory_changes_mode_times_or_xattrs``,
    ``test_a_program_still_locks_its_own_files_and_uses_sqlite``, ``test_a_program_still_copies_and_touches_its_own_files``,
    ``test_the_supervisors_folder_is_not_in_the_trainers_tmpdir``);
  - comparisons are Python's own on plain data (``True == 1``, ``1 == 1.0``, so ``1 != True`` fails; ``is`` only
    against ``None``, ``True``, ``False``, ``...`` or a type) (``test_sandbox_api::test_floats_and_containers_compare_as_python_does``,
    ``test_python_semantics``, the python_semantics tasks);
  - what the test does to its own values is done by Python (``judging.expected_values.run_here``): expected values it mutates,
    extends, sorts, deletes from, fills in a loop or in ``setUp``, and aliases of them; a mutable value of the test
    that a call into the program reads is handed to the program, aliases kept, and read back after the call, so
    in-place functions (``rotate(nums, 2); assert nums == ...``) are judged on what they did; such a call is
    setup for the asserts after it, not a test of its own. A public corpus of 24 tasks (mutated expected values,
    aliasing, in-place functions, ``!=``/``not in`` with bools) in asserts, pytest/unittest and ``check`` form:
    every right program scores 1.0, every wrong one less (``test_python_semantics``, all tests; the corpus is
    ``tests/sandbox/mutation_corpus.py``, checked in plain Python by ``test_the_corpus_means_what_it_says_in_plain_python``);
    and 10 more tasks (``tests/sandbox/types_corpus.py``): a ``Counter``, ``defaultdict``, ``namedtuple`` or keys view
    returned, generators and ``map`` objects consumed by the test, round trips tested both ways, test classes
    keeping state on ``self``;
  - strong asserts: ``==``/``!=``/``is``, order comparisons, ``in``, ``math.isclose`` and ``pytest.approx``, bare and negated calls, arithmetic, the listed builtins and ``str`` methods on results, expected values the test computes or names (``setUp`` included), loops over the test's own values unrolled (``test_strong_shapes``, all tests; ``test_sandbox_plan::test_strong_forms_send_only_the_calls_into_the_program``, ``test_loops_over_the_tests_values_are_unrolled_into_strong_asserts``, ``test_set_up_values_are_the_parents``; ``test_sandbox_api::test_order_comparisons_are_judged_in_the_parent``, ``test_floats_and_containers_compare_as_python_does``);
  - no verdict is decided inside the program's process: ``all``, ``any``, ``bool``, ``isinstance`` and ``type``,
    unittest's ``assert*`` methods (with unittest's own semantics: ``assertSequenceEqual`` of a list and a tuple,
    ``assertAlmostEqual`` of complex numbers), ``pytest.raises``/``approx`` and numpy's comparisons are applied in
    the parent to the values that crossed (an exception crosses as its class's ancestry; a numpy array of numbers
    as its dtype, shape and elements); the sandbox only sends values, so a program that rewrites the sandbox's own
    tables, probes or helpers (``child.REAL``, ``_probe``, ``_leaves``), or unittest, pytest or numpy, forges values
    and nothing more: it scores what an honest program returning those values scores
    (``test_no_verdict_inside``, all tests; ``test_assert_methods``, all tests: each helper agrees with unittest
    and pytest on the same values);
  - real suites as they are: pytest's ``parametrize`` (ids, stacked, ``pytest.param``, ``indirect``), fixtures
    (``tmp_path``, ``tmp_path_factory``, ``capsys``, ``capfd``, ``monkeypatch``, ``request``; the module's and a
    test class's own, with ``yield``, ``params``, ``autouse``, module scope), marks (``skip``, ``skipif``, ``xfail``,
    ``usefixtures``, ``pytestmark``; any other ignored), ``raises``/``warns``/``approx``; a suite written as public
    projects write theirs counts and judges every test as plain pytest does, for the right program and six wrong
    ones; a fixture that only computes the test's values is computed here and never reaches the sandbox
    (``test_real_suites``, all tests; ``test_pytest_collection``, all tests);
  - early exits, always-equal objects and impostor subclasses, patched builtins, tracing, patched test frameworks, fake "PASSED" prints, forged result frames (``test_adversarial``, the tests up to ``test_deeply_nested_forged_frame_does_not_crash_the_parent``; ``test_adversarial_batch::test_patching_unittest_pytest_and_sys_modules_earns_nothing``, ``test_forged_frames_for_a_check_function_earn_nothing``);
  - the tests file, other files, ``/proc`` of the parent, the environment, in every mode (``test_adversarial::test_reading_*``, ``test_environment_secret_is_not_visible``; ``test_containers::test_the_tests_file_and_the_parents_proc_are_out_of_reach``; ``test_isolation::test_fs_jail_*``, ``test_environment_is_the_allowlist``);
  - writes outside the working directory, files left behind, per-user directories, this project's source (``test_adversarial::test_file_writes_outside_the_sandbox``, ``test_deleting_a_file_outside_the_sandbox``; ``test_containers::test_nothing_is_left_in_tmp_or_dev_shm``, ``test_per_user_directories_are_removed``, ``test_a_killed_supervisors_directory_is_removed_by_the_pool``, ``test_the_projects_own_source_is_not_readable``; ``test_isolation::test_tmpdir_is_empty_and_fresh``);
  - the network: TCP to loopback, every socket family but AF_UNIX (AF_VSOCK included), any socket reached by address (a UNIX socket of the trainer's), in every mode (``test_containers::test_no_tcp_to_a_listener_on_loopback``, ``test_no_socket_family_but_unix_in_any_mode``, ``test_no_unix_socket_outside_the_execution_in_any_mode``; ``test_isolation::test_netns_blocks_loopback``);
  - privileges: uid, capabilities, chroot escapes, new namespaces, the denied system calls, the keyring between completions, signals to the parent (``test_adversarial_batch``, the tests up to ``test_the_kernel_keyring_passes_nothing_between_completions``; ``test_adversarial::test_ctypes_setuid_root_and_chroot_escape``, ``test_killing_the_parent_and_everything_else``; ``test_containers::test_signals_do_not_reach_the_parent``);
  - other processes by pid, with executions at the trainer's uid too (no namespaces, no uid drop): their limits,
    priority, CPU affinity and scheduler stay as they were, and no abstract socket name can be held (a covert
    channel between programs running at once) (``test_containers::test_no_execution_changes_another_process_by_pid``,
    ``test_a_program_still_sets_its_own_limits_priority_and_affinity``); the process cap counts the sample's tree,
    not the trainer's threads (``test_the_process_cap_counts_only_the_samples_tree``, unprivileged lane);
  - resources: CPU, wall clock, memory per process and per tree, processes and threads per tree, output, the sample's budget, the reply's size, the OOM killer's choice (``test_adversarial``, ``test_fork_bomb`` to ``test_setrlimit_cannot_be_raised``; ``test_run_safety``, all tests; ``test_tree``, all tests: what the tree walk reads in ``/proc``; ``test_sandbox_api::test_timeout_reason``, ``test_stdin_stdout_timeout_skips_later_cases``);
  - nothing of an execution outlives it: daemons, orphans, threads, trees that defeat clean-up (``test_adversarial::test_double_forked_daemon_does_not_survive``, ``test_threads_that_outlive_main``; ``test_isolation::test_degraded_mode_*``; ``test_adversarial_batch::test_1500_nested_unwritable_symlinked_dirs_do_not_break_the_batch``, ``test_deep_tree_in_degraded_mode_is_removed_from_the_host_tmp``, ``test_remove_tree_copes_with_deep_unreadable_and_symlinked_trees``);
  - the test's own computations never run in the trainer: plans are made in a planner process of their own
    (``judging.planner``), bounded in wall time and memory; a test value too costly to compute is a ``ValueError``
    naming the bound (``test_planner``, all tests);
  - judging is bounded: the trainer's thread spends at most ``judging.budget.JUDGE_CPU_S`` (2 s) of CPU on one
    sample's values (past it the sample scores 0, with the reason), and ``//``, ``%`` and ``math.gcd`` of ints too
    large to judge quickly fail their test, naming the bound; ``sum`` of lists is linear (``test_budget``, all
    tests);
  - values that could crash or stall the parent (``test_adversarial::test_huge_int_result_is_judged_not_crashing``; ``test_adversarial_batch::test_huge_int_against_isclose_is_a_failed_test_not_an_overflow``, ``test_a_set_of_colliding_hashes_is_refused_by_a_bound``, ``test_decoding_bounds_raise_value_limit_not_crash``; ``test_plaindata``);
  - a lost supervisor or template: retried once, then 0, never an exception out of the reward (``test_sandbox_pool``);
  - too little isolation refuses to score unless accepted, and the acceptance is recorded (``test_containers::test_too_little_isolation_refuses_to_score``, ``test_accepted_degraded_isolation_is_recorded_by_the_reward``);
  - the layers each lane must have (root, a plain user, a simulated default container) are in effect (``test_adversarial_batch::test_every_layer_of_this_lane_is_active``; ``test_isolation``, the tests up to ``test_rlimit_nproc_reported_only_when_enforced``);
  - the shapes of ``tests``: assert lists, stdin/stdout cases, scripts, pytest functions, ``unittest`` classes,
    HumanEval's ``check``, and the limits, validated before anything runs (``test_test_formats``,
    ``test_sandbox_api``, ``test_sandbox_plan``, ``test_sandbox_limits``);
  - HumanEval: every canonical solution passes, no broken one does (``test_humaneval``);
  - ``run_code``: one code string run as a script under the same isolation, what it printed returned and nothing
    judged (``test_run_code``, all tests);
  - real programs as Python runs them, each checked in plain Python first: a script's ``sys.argv``, ``__file__``
    (a real file) and ``sys.executable`` (a subprocess importing numpy), an expected output past a megabyte (the
    output limit never below a case's expected output; ``max_output_bytes`` sets it otherwise), ``spawn`` and a
    ``Manager`` in scripts and under tests, 100 threads, a test's ``random.seed`` (in the test, at module level,
    in ``setUp``, in an assert list) seeding the program's generator, NaN's identity in containers, a trainer
    started through a symlinked venv (``test_real_programs``, all tests); in the jail a program may hold a UNIX
    socket name, which no program running at once sees (``test_containers::test_no_bit_passes_between_programs_running_at_once``).
- weak (counted in ``UnitTestVerdict.weak`` and marked "(weak: test code ran in the sandbox)" in the reason;
  the program could forge them):
  - asserts the parent cannot judge: a helper the test defines, a comparison of the program with itself, a
    comprehension over program values, an unlisted builtin, an expected value computed from the program's
    own functions (``test_strong_shapes::test_a_test_helper_predicate_is_weak_even_after_patched_builtins``,
    ``test_comparing_the_program_with_itself_is_weak``, ``test_isclose_against_a_value_computed_from_the_program_is_weak``,
    ``test_humaneval_isclose_against_the_programs_own_helper_is_weak``; ``test_sandbox_plan::test_weak_forms_run_whole_in_the_sandbox``;
    ``test_sandbox_api::test_asserts_the_parent_cannot_judge_run_inside_the_sandbox``);
  - a method such as ``get`` or ``count`` called on an object of the program's own class
    (``test_strong_shapes::test_the_programs_own_method_under_test_is_weak_when_it_is_a_plain_name``);
  - test code that is not an assert: loops over values the sandbox computes, ``with pytest.raises``, a plain
    script (``test_sandbox_plan::test_a_loop_over_program_values_stays_weak``, ``test_a_plain_script_is_one_weak_test``;
    ``test_test_formats::test_reward_counts_weakly_scored_samples``).
- not covered, each with the test that shows it where one can:
  - kernel exploits, GPU access, and side channels (timing, CPU and memory contention between programs that run
    at once, pid numbers without a PID namespace): no test can show their absence;
  - a program that remembers an earlier assert's argument of the same body (an assert list, one ``check``) and
    answers a later assert with it: Python lets state carry from one assert to the next there, and a later
    assert's arguments never reach an earlier one (``test_feeder::test_state_carries_from_one_assert_to_the_next_within_a_body``,
    ``test_within_one_body_a_later_assert_sees_only_earlier_ones_never_a_later_one``);
  - an earlier test body's arguments reaching a later body, as under plain pytest: a module global is enough (the
    bodies share the body runner; ``test_feeder::test_separate_test_bodies_share_what_the_program_remembers_as_under_pytest``),
    and so is what outlives a runner: a file in the working directory, memory mapped shared before the
    runner was forked, a process that left the body's process group (``setsid``) or that the program started while
    it loaded. Such a process holds the job pipe and the result channel: it can report the body's end itself, read
    the next test's inputs before the loaded program does and answer them. No authentication of frames can stop it
    (it inherited whatever the loaded program held, and writes on the same channel), and killing it would still leave
    files and shared memory; deterministic, with and without namespaces
    (``test_feeder::test_an_earlier_bodys_argument_can_reach_a_later_body_through_what_outlives_a_body``). What holds,
    whoever reads the job pipe: a later test's inputs never reach an earlier test
    (``test_feeder::test_a_process_reading_a_later_tests_inputs_cannot_answer_an_earlier_test``), and a process left
    in the body's group never sees the next test's (``test_feeder::test_a_process_a_test_body_left_running_never_sees_the_next_tests_inputs``);
  - module state one test function changes for the next carries over as under pytest (the random generator's
    state included: a module-level ``random.seed`` seeds the first body, the next draws on;
    ``test_real_programs::test_a_module_level_seed_carries_from_one_test_body_to_the_next``), but not across a
    fresh runner: after a body that ended the runner, a module-scoped fixture made between bodies (in the loaded
    program, before the first body that needs it), or a runner that used 5% of the CPU limit, the next body starts
    from the loaded program's state, and a test class's set-up runs again in the fresh runner before the class's
    next test (its state was lost with the old runner:
    ``test_plan_classes::test_a_fresh_runner_runs_the_class_set_up_again_before_the_next_test_of_the_class``).
    Threads a body started go on in the runner during later bodies, as under pytest. A value of the test module's
    own (a module-level list of the test's) that a test changes in place does not carry to the next test: each
    body gets the module's value, computed here
    (``test_plan_code_order::test_a_value_of_the_test_modules_own_that_a_test_changes_in_place_does_not_carry_to_the_next``);
    nor does a value a class set-up gives (``cls.seen = []``) that a test changes in place other than by a list,
    dict or set method called on ``self.seen`` or an item assignment to it (those make it state of the sandbox's,
    as assignments through the class do). The order is pytest's; ``python -m unittest`` or ``unittest.main()``
    would run a module's ``TestCase`` classes by name, and a suite whose classes pass state on may differ there;
  - without the jail: POSIX semaphores (``Pool``, ``Queue``, ``Lock``: PermissionError;
    ``test_multiprocessing::test_without_the_jail_processes_and_pipes_work_and_semaphores_are_refused``), UNIX
    sockets reached or held by name (``Manager``: PermissionError; ``test_containers::test_no_bit_passes_between_programs_running_at_once``),
    changing a file's mode or times (the call does nothing; ``test_containers::test_nothing_outside_the_working_directory_changes_mode_times_or_xattrs``),
    disk use in the working directory (capped per file only, ``RLIMIT_FSIZE``: ``test_real_programs::test_without_the_jail_disk_is_capped_per_file_only``);
  - a seed the test sets other than by a ``random.seed``/``np.random.seed``/``torch.manual_seed`` call of values it
    knows: the program's generator stays unseeded (``test_real_programs::test_a_seed_set_otherwise_leaves_the_programs_generator_alone``);
  - the test data itself: ``tests`` are trusted, their own values computed in a planner process (``test_planner``);
  - short-circuiting inside an assert: every call into the program in it is evaluated, so its side effects happen
    even where Python would skip the call (an exception it raises counts only where Python would read it)
    (``test_real_programs::test_every_call_of_an_assert_runs_even_past_a_short_circuit``);
  - memory allocated faster than one 10 ms tick (the OOM killer then takes a sandbox process first:
    ``test_run_safety::test_the_sandbox_is_the_oom_killers_first_choice_and_the_parent_is_untouched``), memory that a
    program's processes share after it forked (each counts it: such a program may be stopped early;
    ``test_run_safety::test_a_memory_bomb_across_processes_leaves_the_parent_as_it_was``), kernel memory (pipes,
    sockets);
  - on machines other than Linux, every layer but the process limits: then reported missing, and scoring refused
    unless accepted (``test_containers::test_too_little_isolation_refuses_to_score``).
"""

from __future__ import annotations

from ._run import CodeRun, plan_tests, run_code, run_unit_tests, run_unit_tests_batch
from .isolation.limits import SandboxLimits
from .isolation.policy import isolation_problems
from .judging.verdict import WEAK_NOTE, UnitTestVerdict

__all__ = ["CodeRun", "SandboxLimits", "UnitTestVerdict", "degraded_isolation_notes", "isolation_layers",
           "isolation_problems", "missing_layers", "plan_tests", "run_code", "run_unit_tests", "run_unit_tests_batch",
           "weak_sample_counts"]


def missing_layers() -> list[str]:
    """Why each missing isolation layer is missing, as this process's supervisors reported it (also logged as a
    warning, once): e.g. "no user namespace: [Errno 1] unshare: Operation not permitted"."""
    from .isolation.pool import MISSING_LAYERS

    return list(MISSING_LAYERS)


def weak_sample_counts(samples: list[dict]) -> dict[str, int]:
    """Per reward name, how many scored samples (``{"scores": {name: {"reason": ...}}}``, as in an inspection
    artifact) had tests judged inside the sandbox; rewards with none are left out."""
    counts: dict[str, int] = {}
    for sample in samples:
        scores = sample.get("scores") if isinstance(sample, dict) else None
        for name, scored in (scores.items() if isinstance(scores, dict) else ()):
            if isinstance(scored, dict) and WEAK_NOTE in str(scored.get("reason", "")):
                counts[name] = counts.get(name, 0) + 1
    return counts


def degraded_isolation_notes(manifest_rewards: list) -> dict[str, str]:
    """Per reward name, the degraded isolation it was allowed to score with (``notes["degraded_isolation"]`` of
    the rewards recorded in an inspection manifest); rewards without are left out."""
    out = {}
    for reward in manifest_rewards if isinstance(manifest_rewards, list) else ():
        notes = reward.get("notes") if isinstance(reward, dict) else None
        if isinstance(notes, dict) and notes.get("degraded_isolation"):
            out[str(reward.get("name"))] = str(notes["degraded_isolation"])
    return out


def isolation_layers(allow_degraded_isolation: bool = False) -> tuple[str, ...]:
    """The isolation layers in effect on this machine, found by running a trivial program in the sandbox.

    Raises:
        SandboxError: the sandbox cannot run even a trivial program correctly.
    """
    from ..errors import SandboxError

    verdict = run_unit_tests("x = 1", ["assert x == 1", "assert x != 2"],
                             allow_degraded_isolation=allow_degraded_isolation)
    if verdict.passed != verdict.total:
        raise SandboxError(f"the sandbox self-check failed: {verdict.reason}")
    return verdict.layers
