"""The ``ismcts`` strategy for Data Structures: information-set Monte Carlo tree search.

Single-observer ISMCTS after Cowling, Powley and Whitehouse, "Information Set
Monte Carlo Tree Search" (IEEE TCIAIG 4(2), 2012). Where ``search`` (flat
Monte Carlo) scores each legal intent separately and models both seats as
greedy, this strategy grows one tree through every decision that follows --
the rest of its own turn (its plays, the phase 2 stack card, the enqueues, the
end of the turn) and then the opponent's whole turn -- so a turn's plays are
planned as one sequence and the opponent's replies are searched, not assumed.

Structure:

- :mod:`engine.bots.ismcts_tree`: the tree. Nodes are the observer's
  information sets, edges are moves keyed by card value (:func:`move_key`),
  selection is UCB over availability counts with progressive bias.
- :mod:`engine.bots.ismcts_policy`: greedy's scores as move priors, and the
  playout policies.
- :mod:`engine.bots.ismcts_eval`: the learned leaf evaluation.
- :mod:`engine.bots.ismcts_expert`: a move policy fitted to a stronger search's
  choices (``priors``/``playout`` ``expert``; off: it did not pay).
- :mod:`engine.bots.ismcts_belief`: which cards the opponent kept, for the deals.
- :mod:`engine.bots.ismcts_opponent`: whether the opponent stacks like greedy.
- this module: :class:`ISMCTSStrategy`, the search loop and subtree reuse.

One *iteration* (the budget counts them) is one sampled world:

1. **Determinize**: sample a world consistent with the seat's view, a new one
   every iteration (``engine.datastructures.determinize``: the opponent's hand,
   the deck order and the face-down recycle pile dealt at random); with
   ``belief`` on, the opponent's hand is then redealt in part from the cards it
   is likely to have kept through its last turn (:mod:`engine.bots.ismcts_belief`,
   read from the seat's own view at the first decision of its turn).
2. **Every root move in that world** (common random numbers, as ``search``
   does with its candidates): each distinct legal move of the seat is applied
   to its own copy of the world, and the iteration goes on from that root
   child down the child's subtree (3-5).
3. **Select**: while every move legal in this world has a child (and the
   node may not widen, below), descend by UCB over availability counts with
   progressive bias (``ismcts_tree.Node.select``), applying the moves to the
   world; whoever is to move in it (either seat) picks at that node. At the
   opponent's nodes the bias has its own weight (``opp_bias``) and, with
   ``opp_priors`` ``world``, comes from greedy's scores of the moves in *this*
   world (its hand is dealt anew each time; a stored prior is greedy's opinion
   in the world that first expanded the move); ``model`` does that only once
   the opponent's stacked cards, seen so far in the game, look like greedy's
   (:class:`engine.bots.ismcts_opponent.OpponentModel`).
4. **Expand**: add one untried legal move -- greedy's favourite among them
   when ``prior_order`` is on, else a random one -- with its prior.
5. **Play out**: from there, the playout policy moves both seats (``greedy``:
   :func:`engine.bots.ismcts_policy.greedy_play_out`, greedy's very choices with
   each phase 2 decided at once) until the ``horizon``-th turn end after the root (3: through the opponent's next turn
   to the end of the seat's own next one; the tree itself stops at the horizon
   too, so every line is scored at the same point of the game and costs at most
   one playout to it), then the leaf evaluation (``evaluation``, below)
   scores the position: by default the chance to win that a logistic model
   fitted to greedy games gives it (:func:`engine.bots.ismcts_eval.win_chance`,
   as ``2 p - 1``); ``cards`` is ``search``'s own score
   (:func:`engine.bots.search.evaluate`: cards on arrays and reachable next
   turn, both seats).
6. **Back up**: each root move's score is set against the mean score of all
   the root moves in this world, and a logistic squashes the difference into a
   reward in [0, 1] (a won game is 1, lost 0, drawn 0.5); every node on that
   move's line counts the visit and the reward for the seat that moved into it.
   Comparing the moves within one world removes most of the noise of the
   hidden cards, which a few dozen worlds per decision could not average away.

Below the root the tree widens progressively (``widen``): a node opens its
greedy-best move first and one more legal move each time its visits pass
``WIDEN * k**2``, so the lines below a root move start as greedy's and only
well-visited nodes branch out.

With ``crn`` False an iteration is the paper's: one line from the root per
world, the root selected by UCB like every other node, the reward centred on
the mean score of the decision so far (``center``), the move played the most
visited. Measured at 0.05 s per move it did worse (about 44% of decided games
against ``search`` over 240 games): its estimates of the root moves carry the
whole noise of the hidden cards.

With ``prune`` above 0 (off by default: it did not pay), the root moves race: after :data:`PRUNE_AFTER` worlds, and every
:data:`PRUNE_EVERY` after that, a move whose mean reward in this decision is more
than ``prune`` standard errors below the best one's gets no new worlds (two
always stay), so the worlds go to the moves still in question. The move played
is the root move with the best mean reward among those still racing (they all
saw the same worlds). With ``reuse`` on,
the child chosen is kept: when the next call is the same seat's next decision
of the same turn and the view shows exactly that move's effect, the search
goes on from that subtree instead of starting afresh.

Measured (decided games; 2 shared, loaded cores, so small runs are noisy):

- round 8, the same 10-game screens against ``greedy`` (seeds 2101-2116), 0.05 s
  of CPU time per move unless said, the machine of round 7 giving about twice its
  worlds now (median 102 worlds per decision, per-game means: less load); "the
  control" is the default run again in this round on the same deals: 131:29
  (81.9%, 95% 75.2-87.1%; round 7's 122:38 was at 59 worlds); against ``search`` on
  1001-1008 36:44 (45.0%, 34.6-55.9%, median 97 worlds; round 7's 40:40). No
  variant beat it, so none went to a 400-game final and none was run against
  ``search``; the default is unchanged.

  - the budget curve: at 0.2 s (seeds 2101-2112, 120 games, median 413 worlds)
    104:16 (86.7%, 95% 79.4-91.6%) where the control won 100:20 (83.3%) on those
    deals (won 18 it lost, lost 14: a sign test's p about 0.6); on 2101-2108
    alone 71:9 against 66:14. Four times the worlds are worth three or four
    points, not clearly anything on 120 games: at this design's figure against
    ``greedy`` more worlds are not the lever to 85%, as round 5 found at 0.025 s.
  - expert iteration (:mod:`engine.bots.ismcts_expert`, ``scripts/fit_expert.py``):
    1362 decisions (either seat, a quarter of those with a choice) of 40
    ``ismcts``-``greedy`` games at 12 worlds a move, each labelled by a fresh
    ``ismcts`` at 500 worlds (about five times this round's budget); a softmax
    over 28 move features (greedy's terms taken apart, and greedy's verdict)
    fitted with a ridge of 1 on the first 30 games. Held out (the last 10 games,
    346 decisions): log-loss 0.834 against 1.054 for greedy's favourite alone
    (best scale) and 1.122 for a uniform choice; the fit's favourite is the
    expert's at 64.7% of them, greedy's at 51.4%; the expert itself, run again
    with other seeds on the decisions of 4 of the games, made the same choice at
    99 of 131 (75.6%), so about a quarter of the labels are noise. The expert
    leaves greedy's choice at half its decisions: it ends phase 1 with a play
    left at 49 of 689 decisions and starts an empty array beside another play at
    22 of 44 (greedy never does either), stacks greedy's card at 92 of 252 (a card
    it wants more, mean ``keep`` 0.30 against greedy's 0.17; a card the opponent
    needs next at 26 of 147 where greedy would at 4) and ends the turn instead
    of cycling a card at 15 of 293 (greedy 77). As the seat's own priors
    (``priors="expert"``: the progressive bias and the order of expansion below
    the root; the opponent's stay greedy's): 121:39 (75.6%, 68.4-81.6%; won 25
    the control lost, lost 35: p about 0.25), 102 worlds. As the seat's own
    playout policy instead (``playout="expert"``, the priors greedy's, the
    opponent greedy in the playouts; the general loop, so 70 worlds): 118:42
    (73.8%, 66.4-80.0%; won 17, lost 30: p about 0.08).
    Predicting the stronger search's root choice better did not make the lines
    below the root or the playouts better; one reading (not tested): the
    expert's departures from greedy are worth something only with the search
    behind them, and a policy that copies them a quarter wrong, with nothing to
    check it inside a line, plays those lines worse than greedy's.
  - a leaf evaluation refitted on the stronger search's games was not tried:
    the labels above are decisions, not outcomes, and playing enough games at
    500 worlds a move to fit ten weights (round 6 needed thousands) did not fit
    in the round.
- round 7, the same 10-game screens (against ``greedy`` seeds 2101-2116,
  against ``search`` 1001-1016), 0.05 s of CPU time per move, on a machine
  about half as fast (median 54-58 worlds per decision, per-game means, against
  about 107 before; 0.025 s was worth 0.05 s in round 5) and loaded by others;
  "the default" is a control run of the default in this round on the same
  deals (against ``greedy`` 122:38, 76.2%, 95% 69.1-82.2%, Elo +203, median
  59.0 worlds per decision; round 5's figure there 124:36; against ``search``
  on 1001-1008 40:40, on 1001-1016 94:66, 58.8%, 51.0-66.1%, Elo +61, median
  50.8 worlds, where round 5's final won 59:21 and 109:51 on those deals: at
  half the worlds it may fall short of the 60% goal against ``search`` on this
  machine; no 400 games run) unless said. The
  runs (``scripts/ismcts_variant.py KEY=VALUE -- tournament datastructures
  --bots ismcts,OPP --games 10 --seed K --clock cpu --jobs 1 --json``, two at
  a time under ``nice -n 19``) print each game's detector record as well.
  No variant gained clearly on the same run's control, so none went to a
  400-game final (one would have taken over an hour on the loaded cores); the
  default unchanged, its 400-game figures below stand.

  - the opponent forced to greedy's own choice in this world (``opp_priors=
    "forced"``: at each of its nodes the only move is greedy's on this world's
    board, so a node has one child per world, not a prior) while the mean-rank
    model says greedy, ``opp_model_turns=0``: against ``greedy`` 126:34
    (78.8%, 95% 71.8-84.4%, Elo +228), the default's 122:38 (won 28 games the
    default lost, lost 24 it won: a sign test's p about 0.7); forced at 83.0% of
    its decisions (the model called ``greedy`` not greedy at 17.0%). Against
    ``search`` stopped after 20 games (13:7; forced at 22.5% of decisions).
    Forcing the reply is no better than round 6's soft priors from this world
    (136:24 on these deals): with the opponent's hand a guess, greedy's choice
    in the sampled world is often not its real one, and a single child leaves
    no room for the others.
  - a better detector, the same priors: :class:`engine.bots.ismcts_opponent.
    RankLikelihood` (``opp_detector="llr"``), the log-odds of greedy against
    search from each stacked card's rank bin (fitted on the stacked cards of
    the forced runs above: 2015 of ``greedy``'s, 301 of ``search``'s), from a
    prior of 0.5; held out by halves of those games it called ``greedy`` greedy
    at 92-96% of the cards and ``search`` greedy at 32-34%. With world priors
    (``opp_priors="model"``) on its say: against ``greedy`` 124:36 (77.5%,
    70.4-83.3%; won 29 the default lost, lost 27), greedy at 94.8% of
    decisions; against ``search`` (60 games, 1001-1006) 29:31 (48.3%, 36.2-60.7%) where the
    control won 28:32 (won 16 it lost, lost 15), greedy at 39.8% of
    decisions; against the default ``ismcts`` (10 games, seed 3001) 4:6, greedy at 38.8%. The errors
    both ways, on those real games: greedy called not greedy at 5.2% of
    decisions (the mean-rank model: 17.0%), ``search`` and ``ismcts`` called
    greedy at 39.8% and 38.8% (the mean-rank model, ``search``: 22.5%). The
    stacked card cannot tell them apart better: ``search`` and ``ismcts`` roll
    out with greedy and stack greedy's card often (mean rank 0.36 against
    greedy's 0.19, but a third of their cards in greedy's cheapest bins). And
    the detector's near-perfect call on ``greedy`` did not make world priors
    pay there (124:36 against round 6's 136:24 with them always on, the same
    deals): that screen's gain was noise, as its final (82.5%) said.
  - a longer horizon (``horizon=5``: every line played on to the end of the
    seat's turn after next), since more worlds had not paid: against
    ``greedy`` 119:41 (74.4%, 67.1-80.5%, Elo +185; won 26 the default lost,
    lost 29) at a median 39.5 worlds per decision; not run against ``search``.
  - the leaf evaluation fitted to greedy's games by stage (round 5's 17
    features) was not rebuilt: its weights were never kept, and refitting
    them on 20,000 games did not fit in the round.
- round 6's one final: the stack-rank opponent model from the first turn
  (``opp_priors="model"``, ``OPP_MODEL_TURNS`` 0; the best screen below, 84.4%)
  against ``greedy`` on the final's deals (seeds 2001-2040, 400 games, 0.05 s of
  CPU time per move): 330:70 (82.5%, 95% 78.5-85.9%, Elo +269), where the
  default's final won 327:73 on the same deals. The screen's gain did not hold
  up; the default stays, the model off (no final against ``search`` run).
- round 6, the same 10-game runs and deals as round 5's screens (against
  ``greedy`` seeds 2101-2116, against ``search`` 1001-1016), 0.05 s of CPU time
  per move; "the default" is the same build's figures on the same deals (its
  round 5 runs: 124:36 against ``greedy``; against ``search`` 109:51 from its
  final, 59:21 on 1001-1008 there and 54:26 when run again; a control run in
  this round, below). The default unchanged, its 400-game figures (below)
  stand, no finals run: the runs could not have finished in the time left.

  - the opponent's priors from this world (``opp_priors="world"``): against
    ``greedy`` 136:24 (85.0%, 95% 78.7-89.7%, Elo +301; the default 124:36,
    77.5%; won 29 games the default lost, lost 17 it won); against ``search``
    (90 games) 46:44 (51.1%, 41.0-61.2%) where the default won 60:30 (won 11
    the default lost, lost 25 it won). Modelling the opponent as greedy on the
    hand of each world is worth several points against ``greedy`` and costs
    about fifteen against ``search``, as round 5's closer fit to greedy's games
    did: it learns to beat greedy. A world costs about the same (median 93 and
    98 worlds per decision against 92 and 108, 69 positions, under load).
  - a weaker prior at the opponent's nodes (``opp_bias=0.3``, stored priors):
    against ``greedy`` (80 games) 66:14 (82.5%) where the default won 61:19;
    against ``search`` (80 games) 45:35 (56.2%, 45.3-66.6%) where it won 59:21
    and 54:26. Neither direction away from today's weight pays against
    ``search``.
  - an opponent model read from the game (``opp_priors="model"``,
    :mod:`engine.bots.ismcts_opponent`): this world's priors only while the
    opponent's stacked cards look like greedy's -- their mean rank among the 13
    values by greedy's own stacking cost at most 0.24, after at least 8 of them
    (``OPP_MODEL_THRESHOLD``, ``OPP_MODEL_TURNS``). The rank after 10 stacked
    cards, one game each: ``greedy`` 0.12-0.25 (11 games), ``search`` at 12
    worlds a move 0.23-0.39 (11), at 0.05 s 0.28-0.46 (7), ``ismcts`` at 12
    0.31-0.51 (12); on the real states ``search`` stacked greedy's card at 28 of
    69 decisions (``greedy`` with another seed 69 of 75). A first signal, a
    public card (queue head, a stack top) left playable at the end of the
    opponent's phase 1, which greedy never does, was seen in 0 of 189
    ``greedy`` turns, 0 of 194 ``search`` turns and 1 of 165 ``ismcts`` turns:
    useless, dropped. The model: against ``greedy`` 126:34 (78.8%, 71.8-84.4%;
    won 26 the default lost, lost 24), against ``search`` (120 games) 75:45
    (62.5%, 53.6-70.6%) where the default won 79:41. With ``OPP_MODEL_TURNS``
    0 (greedy until the stacked cards say otherwise): against ``greedy`` 135:25
    (84.4%, 78.0-89.2%, Elo +293; won 29 the default lost, lost 18), against
    ``search`` 103:57 (64.4%, 56.7-71.4%, Elo +103) where the default's final
    won 109:51. The best of this round, not run to 400 games (no time).
  - a control: the default itself run again against ``search`` on 1001-1008
    in this round's conditions won 48:32 (60.0%; its final 59:21, round 5
    54:26); there ``OPP_MODEL_TURNS`` 0 won 50:30 (won 19 games the control
    lost, lost 17), 8 turns 49:31, ``opp_bias`` 0.3 45:35, world priors (70
    games) 36:34. So the search screens above set each build against a lucky
    figure: the cost of the model against ``search`` is within the noise,
    while that of world priors (always on) is not. ``OPP_MODEL_TURNS`` 0 is
    the build to take to the 400-game runs next.
  - the leaf evaluation refitted on positions of ``ismcts`` games (12 worlds a
    move; ``scripts/fit_evaluation.py --matches``; every turn end, labelled by
    the game's winner): 300 games against ``greedy`` and 67 against ``search``
    (11,254 and 2,641 positions; games against ``ismcts`` itself were not
    played, their CPU went to the screens). Held-out log-loss, five folds by
    game, the refit against today's weights: against ``greedy`` 0.5057 and
    0.5042, against ``search`` 0.5988 and 0.5870 (with a ridge of 100 toward
    today's weights 0.5052 and 0.5982); the last fifth of the games held out,
    0.4797 and 0.4612, 0.5508 and 0.5282. A few hundred games do not fit ten
    weights better than 4000 of greedy's did, on the positions of either kind;
    not played, the leaf unchanged.
- round 5, 10-game runs at 0.05 s of CPU time per move unless said; the
  default unchanged, its 400-game figures (below) stand, no finals run:

  - search strength per CPU, against ``greedy`` on the same 160 deals (seeds
    2101-2116): at 0.025 s 126:34 (78.8%, 95% 71.8-84.4%, Elo +228), at 0.05 s
    124:36 (77.5%, 70.4-83.3%, Elo +215); 0.025 s won 27 games that 0.05 s lost
    and lost 25 it won. Half the worlds cost nothing measurable, so twice the
    worlds per second is not the lever: no faster playout path was built
    (0.1 s not run).
  - a leaf evaluation fitted more closely to greedy's own games (20,000 of
    them, scored on 5,000 others; held-out log-loss of today's weights 0.5678):
    the same ten features refitted 0.5672, 35 features in one model 0.5613, ten
    features with weights for each of four stages of the game (the share of the
    72 cards placed) 0.5603, 17 features by stage 0.5573, a small neural net
    (too slow for a leaf) 0.5532. The 17-by-stage model against ``greedy`` on
    those 160 deals 132:28 (82.5%, 75.9-87.6%, Elo +269; won 28 the default
    lost, lost 20 it won), on the final's deals 2001-2013 (130 games) 104:26,
    the default's own figure; against ``search`` on 1001-1008 (80 games) 47:33
    (58.8%) where the default won 59:21 in its final and 54:26 run again now.
    Weights quadratic in the stage instead (held-out 0.5578): against
    ``greedy`` 134:26 (83.8%, 77.3-88.7%), against ``search`` on 1001-1016 (160
    games) 94:66 (58.8%, 51.0-66.1%) where the default's final won 109:51. So a
    closer fit to the outcomes of greedy's own games is worth a few points
    against ``greedy`` (about one standard error) and costs about ten against
    ``search``: it learns what beats greedy. Not kept (its 17 features made every
    leaf 6.8 -> 10.0 µs); the next try would fit on positions of ``ismcts``
    games against several opponents.

- this round's final, the root race at 3 standard errors (``prune=3.0``) with
  the greedy playout without the general loop, the belief off, 0.05 s of CPU
  time per move, the same 10-game runs and seeds as the build before ("final of
  the build before", below), 400 games each: 235:165 against ``search`` (58.8%, 95%
  53.9-63.5%, Elo +61), 328:72 against ``greedy`` (82.0%, 77.9-85.5%, Elo +263);
  134-136 worlds per decision (median, below). On the same deals the build before won 252
  and 327: no gain against ``greedy``, 4 points fewer against ``search``. The
  screen below that chose the race did not hold up, so it is off by default
  (``prune`` 0.0): the default plays as the build before, whose 400-game figures
  stand (not run again), with the same choices in every world and 8% more
  worlds per decision: at a fixed iteration budget it plays the very moves of
  the build before (80 decisions from greedy games, 12 worlds each, seed 5).
- this round's steps, 100 games each against ``greedy`` (seed 4001, the same
  deals for all four, 0.05 s of CPU time): the build before with the faster
  playout alone 76:24; with the belief 73:27; with the root race 83:17; with
  both 77:23. Over 200 games each, the race is worth +5.5 points and the belief
  -4.5, each about one standard error: the race went to the 400-game runs
  (above), the belief stayed off.
- worlds per decision (median over 69 positions from greedy games with more
  than one move, 0.05 s of CPU time each, the builds run in turn, twice): the
  build before 103 and 104; with the greedy playout without the general loop
  112 and 113 (+8%: the same choices, the same draws of the generator, each
  phase 2 decided from one board; and ``arrays.plays`` tests a hand card once
  against the three needs); with the root race as well 134 and 136 (+30%: once
  moves are dropped, a world plays fewer root moves). cProfile of 40 decisions
  at 30 worlds: playouts 58%, the tree's descent 26% (greedy's priors at each
  expansion 7%), determinizing 6%, the evaluation 6%; across playouts and
  descent, applying moves 24%, greedy's phase 1 choices 15%, the legal moves
  12%, greedy's boards 9%: no one part left that would give another 2x short
  of a second, faster rules engine for rollouts.
- the belief (:mod:`engine.bots.ismcts_belief`, ``belief=0.2``): on the real
  opponent hands (``scripts/belief_datastructures.py``, seed 7000) it is worth
  +0.18 nats per position against the uniform deal for a ``greedy`` opponent
  (820 positions, 60 games) and +0.11 for ``search`` at 8 worlds per move (349
  positions, 25 games); knowing the hand would be worth about 15 nats. Its constants
  were chosen on that measure (a grid over the share, the weights of a fitting
  and of a far card). The step runs above used it before the stacked card and
  the mulligan entered it (+0.065 nats then); too little to show in games.
- final of the build before (the default's figures), the ``winprob`` evaluation,
  horizon 3, 0.05 s of CPU time per move
  (10-game runs, ``cardsim tournament --clock cpu``, seeds 1001-1040 against
  ``search`` and 2001-2040 against ``greedy``, 400 games each, seats swapped):
  252:148 against ``search`` (63.0%, 95% 58.2-67.6%, Elo +92), 327:73 against
  ``greedy`` (81.8%, 77.7-85.2%, Elo +260); about 107 worlds per decision
  (median). The same deals as the build before (``cards``, below): against
  ``search`` it won 101 games that build lost and lost 78 it won; against
  ``greedy`` 75 and 52. The 60% goal is met on the point estimate (not by the
  whole interval); 85% is not.
- the ceiling (``scripts/ceiling_datastructures.py``: the same search with its
  determinizations replaced by the real hidden cards, offline only, the
  ``cards`` evaluation of the build before; 150 games
  against ``greedy`` at 0.05 s of CPU time per move, seed 3001, the same deals
  for each row): the real state (opponent's hand, deck order, recycle pile)
  148:2 (98.7%, 95% 95.3-99.6%); only the opponent's real hand, deck and recycle
  pile dealt at random 131:19 (87.3%, 81.1-91.7%); its own determinizations
  117:33 (78.0%, 70.7-83.9%). So most of what separates this strategy from the
  85% goal is what it does not know; knowing the opponent's hand alone reaches
  it.
- inference not built: in 100 greedy games the opponent kept 0 cards after its
  phase 2 in 44% of turns (1.0 on average; the rest of the 5 it holds on the
  seat's turn are fresh from the deck), and what a play-while-you-can opponent
  reveals is only that no kept card fits one of its arrays -- a constraint on
  about one card, against three values in twelve; applied to the whole hand,
  it was false at 19 of the seat's turns in one greedy game of 169 moves.
- leaf evaluation, the same 150 deals against ``greedy``: a logistic model of
  the final outcome on ten features (``scripts/fit_evaluation.py``, 4000 greedy
  games; held-out log-loss 0.552 against 0.585 for ``search.evaluate`` at its
  best scale) as log-odds, reward scale 0.5: 117:33 (78.0%), no change from
  ``cards`` (117:33); as the chance to win (``winprob``, scale 0.25): 123:27
  (82.0%, 75.1-87.3%), kept; at scale 0.5 116:34. Four points on 150 paired
  games is within the noise; the 400-game runs below are the measure. A world
  costs the same (median 107 worlds per decision against 108.5, 70 positions).

- the build before the learned evaluation (``cards``), horizon 3, 0.05 s of
  CPU time per move (``cardsim tournament --clock cpu``; 10-game runs on 2
  shared, loaded cores, 400 games each, the same deals as the final runs
  above): 229:171 against ``search`` (57.2%, 95% 52.4-62.0%, Elo +51), 304:96 against
  ``greedy`` (76.0%, 71.6-79.9%, Elo +200). The goals (60% and 85%) are not met;
  about 110 worlds per decision (median, below).
- before, horizon 2, 0.05 s of wall time per move on a heavily loaded machine,
  400 games each: 205:195 against ``search`` (51.2%, 95% 46.4-56.1%), 274:126
  against ``greedy`` (68.5%, 63.8-72.9%); about 40 worlds per decision then.
- iterations: on the CPU clock a world costs ``ismcts`` what it costs
  ``search`` (102 positions from greedy games, 70 with a choice, 0.05 s each:
  median 184 worlds at horizon 2, 175 for ``search``; 110 at horizon 3); the
  40 against 150 above was wall time under other load. cProfile of a decision
  at horizon 2: playouts 44% (greedy's choice and its board 24%), the tree's
  own descent with its moves applied 35%, determinizing 10%, scoring 5%.
  More worlds do not pay at these counts: ``search`` with twice the time of
  another ``search`` (0.02 against 0.01 s) won 48:52 (100 games), so no
  faster simulation path was built.
- steps at 0.01 s of CPU time against ``search``, 100 games per seed, the
  same deals for each variant: horizon 2 44:56 (seed 11) and 51:49 (seed
  12); horizon 3 56:44 and 52:48 (kept); horizon 4 51:49 (seed 12); horizon
  3 without branching below the root 45:55 (seed 12); horizon 2 without
  branching 47:53, reward scale 6 49:51 (seed 11).
- not tried: re-using a few worlds over several iterations, and root
  parallelisation (it would give this strategy a core that ``search`` does not
  get at the same budget per move).
- steps, the plain variant at 150 iterations per decision against ``greedy``,
  40 games each: random playouts, no priors 30:10; greedy playouts 29:11;
  centred rewards and exploration 0.2 26:14; greedy's priors as progressive
  bias and expansion order, widening 4: 30:10; subtree reuse: 33:7.
- at 0.05 s against ``search``: the plain variant 107:133 (240 games);
  exploration 0.7 against 0.2: 33:27 and 35:25 (60 each); baselines from a
  playout of the same world or its static score instead of centring, and a
  horizon of 1: no gain (41.7-50%, 60 each); every root move per world with
  widening 4: 19:21, widening 16: 23:17 (40 each), then the final runs above.

The budget (:class:`engine.bots.budget.Budget`) is checked before every
iteration: an iteration limit makes the move a function of the seed and the
call history; a deadline is read only through the budget's own clock (the
engine reads none). A decision with one distinct move returns at once. The
strategy reads only the view; it is CPU-bound, so a caller in an event loop
runs ``choose`` in a worker thread. War: it flips.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Sequence
from typing import Any

from engine.bots.base import DEFAULT_BUDGET, Intent, View, flip_intent, require_legal
from engine.bots.budget import Budget
from engine.bots.greedy import board_from_view, choose_on_board
from engine.bots.ismcts_belief import kept_weights, resample_hand
from engine.bots.ismcts_eval import degree_of, win_chance
from engine.bots.ismcts_eval import value as learned_value
from engine.bots.ismcts_expert import expert_choice, expert_priors, expert_weights
from engine.bots.ismcts_opponent import OpponentModel, RankLikelihood
from engine.bots.ismcts_policy import PLAYOUTS, greedy_play_out, greedy_priors
from engine.bots.ismcts_tree import Node, distinct_moves, move_key
from engine.bots.search import board_from_state, evaluate
from engine.datastructures import determinize
from engine.datastructures.deck import VALUE
from engine.datastructures.intents import DSIntent, from_wire
from engine.playout import play_out

#: Share of a time budget used for thinking (as ``search``); the rest is the caller's.
BUDGET_SHARE = 0.9
#: UCB exploration constant (rewards are in [0, 1]; centred rewards differ by a few
#: hundredths, so a small constant: 0.2 did better than 0.7 against search).
EXPLORATION = 0.2
#: Weight of the progressive-bias term (0: off).
BIAS = 1.0
#: Weight of the progressive-bias term at the opponent's nodes (None: :data:`BIAS`).
OPP_BIAS: float | None = None
#: Where the opponent's priors come from when the tree selects among its moves:
#: ``stored``, greedy's scores in the world that first expanded each move (as at
#: the seat's own nodes); ``world``, greedy's scores on this iteration's world,
#: whose opponent hand is a new deal each time; ``model``, ``world`` while the
#: opponent's stacked cards look like greedy's (:mod:`engine.bots.ismcts_opponent`),
#: else ``stored``; ``forced``, while the model says greedy, the opponent's move at
#: each of its nodes is greedy's own choice in this world (its only child there),
#: else ``stored``.
OPP_PRIORS = "stored"
OPP_PRIOR_SOURCES = ("stored", "world", "model", "forced")
#: ``model``: the mean stack rank at or below which, after at least
#: OPP_MODEL_TURNS stacked cards seen, the opponent is taken for greedy.
OPP_MODEL_THRESHOLD = 0.24
OPP_MODEL_TURNS = 8
#: How ``model`` and ``forced`` tell a greedy opponent: ``mean``, the mean stack rank
#: (:class:`engine.bots.ismcts_opponent.OpponentModel`, the two constants above);
#: ``llr``, the likelihood of its ranks under greedy's and search's distributions
#: (:class:`engine.bots.ismcts_opponent.RankLikelihood`).
OPP_DETECTOR = "mean"
OPP_DETECTORS = ("mean", "llr")
#: Progressive widening below the root: a node visited n times has at most
#: 1 + isqrt(n // WIDEN) children legal in a world (0: no widening). With a few
#: dozen worlds per decision, 16 keeps the lines below a root move greedy's until
#: they are well visited (measured: 57.5% against search, 4 did 47.5%).
WIDEN = 16
#: Turn ends after the root that a line reaches before it is scored: 3 is the end
#: of the seat's own next turn, so what a move leaves in hand and on the stack is
#: played, not only estimated (measured against 2: module docstring).
HORIZON = 3
#: Cards of evaluation difference that move the reward from 0.5 to about 0.73.
REWARD_SCALE = 3.0
#: Leaf evaluations by name: (score of a state for a seat, its reward scale).
#: ``cards`` is ``search.evaluate`` (cards ahead); ``learned`` the log-odds of a
#: win fitted to greedy games (:mod:`engine.bots.ismcts_eval`), whose scale 0.5
#: matches ``cards``'s 3 (the fit gives about 0.16 log-odds per unit of ``cards``).
EVALUATIONS: dict[str, tuple[Any, float]] = {
    "cards": (evaluate, REWARD_SCALE),
    "learned": (learned_value, 0.5),
    "winprob": (win_chance, 0.25),
}
#: The share of the opponent's hand dealt as kept cards (:mod:`engine.bots.ismcts_belief`,
#: whose ``KEPT_SHARE`` 0.2 is the measured share): off, as it did not pay (module docstring).
BELIEF = 0.0
#: Root pruning (a race): after PRUNE_AFTER worlds, and every PRUNE_EVERY after
#: that, a root move whose mean reward is more than ``prune`` standard errors below
#: the best one's stops being played in new worlds (at least two stay). Off by
#: default (0.0): at 3.0 it did not pay over 400 games (module docstring).
PRUNE = 0.0
PRUNE_AFTER = 16
PRUNE_EVERY = 8
#: The leaf evaluation used unless one is named.
EVALUATION = "winprob"
#: Where the seat's own priors (progressive bias, expansion order) come from:
#: ``greedy`` (:func:`engine.bots.ismcts_policy.greedy_priors`) or ``expert``, the
#: policy fitted to a stronger search's choices (:mod:`engine.bots.ismcts_expert`).
#: The opponent's stay greedy's either way.
PRIORS = "greedy"
PRIOR_SOURCES = ("greedy", "expert")


def reward_of(score: float, scale: float = REWARD_SCALE) -> float:
    """An evaluation (``search.evaluate``: cards ahead, +-1000 for a finished game)
    squashed into [0, 1] by a logistic of ``score / scale``."""
    x = score / scale
    if x > 40.0:
        return 1.0
    if x < -40.0:
        return 0.0
    return 1.0 / (1.0 + math.exp(-x))


def _signature(view: View, exact: bool) -> tuple[Any, ...]:
    """The parts of a seat's view that one move of that seat determines: with
    ``exact`` False, leaving out what a draw changes (hand, queue, piles)."""
    players = tuple((tuple(tuple(a["cards"]) for a in p["arrays"]), tuple(p["stack"]),
                     p["closed"]) for p in view["players"])
    sig: tuple[Any, ...] = (view["turn"], view["phase"], view["to_move"], view["played"],
                            view["stacked"], view["mulliganed"], players)
    if exact:
        sig += (tuple(view["hand"] or ()), tuple(view["queue"]), tuple(view["discard"]),
                view["deck"], tuple(view["hand_counts"]))
    return sig


class ISMCTSStrategy:
    """Single-observer information-set MCTS (module docstring); War: flip.

    Args:
        seed: seeds sampling, expansion and playouts (None: from the OS).
        exploration: the UCB constant.
        bias: weight of the progressive-bias term (greedy's priors); 0 turns it off.
        prior_order: expand untried moves in greedy's order (else at random).
        horizon: turn ends after the root that a playout reaches before scoring.
        playout: a name in :data:`engine.bots.ismcts_policy.PLAYOUTS`, or ``expert``:
            the seat's own moves by the fitted policy
            (:func:`engine.bots.ismcts_expert.expert_choice`), the opponent's greedy's.
        reward_scale: see :func:`reward_of` (None: the evaluation's own scale).
        reuse: keep the chosen subtree for the seat's next decision of the turn.
        widen: progressive widening below the root (:data:`WIDEN`; 0: off).
        center: centre rewards on the decision's mean score (else on 0).
        crn: common random numbers at the root: every root move in each world
            (module docstring); False: the plain algorithm, one line per world.
        evaluation: a name in :data:`EVALUATIONS`, the leaf score.
        belief: the share of the opponent's hand dealt as cards it kept
            (:mod:`engine.bots.ismcts_belief`); 0: every hidden card uniform.
        prune: the root race's margin in standard errors (module docstring); 0: off.
        opp_bias: the progressive-bias weight at the opponent's nodes (None: ``bias``).
        opp_priors: ``stored``, ``world``, ``model`` or ``forced`` (:data:`OPP_PRIORS`).
        opp_model_turns: with ``model`` or ``forced``, the stacked cards seen before
            the opponent may be taken for greedy (None: :data:`OPP_MODEL_TURNS`).
        opp_model_threshold: the mean stack rank at or below which it is (None:
            :data:`OPP_MODEL_THRESHOLD`).
        opp_detector: ``mean`` or ``llr`` (:data:`OPP_DETECTOR`).
        priors: ``greedy`` or ``expert``, the seat's own priors (:data:`PRIORS`).
        weights: with the ``learned`` or ``winprob`` evaluation, its weights in place
            of :data:`engine.bots.ismcts_eval.WEIGHTS` (one per feature, or blocks of
            them by stage: :func:`engine.bots.ismcts_eval.value`); None: those.

    Raises:
        ValueError: an unknown playout, evaluation, ``opp_priors``, ``opp_detector`` or
            ``priors`` (``expert`` without fitted weights), a negative constant, a
            horizon < 1, or ``weights`` not a whole number of blocks or given to the
            ``cards`` evaluation.
    """

    name = "ismcts"

    def __init__(self, seed: int | None = None, *, exploration: float = EXPLORATION,
                 bias: float = BIAS, prior_order: bool = True, horizon: int = HORIZON,
                 playout: str = "greedy", reward_scale: float | None = None,
                 reuse: bool = True, widen: int = WIDEN, center: bool = True,
                 crn: bool = True, evaluation: str = EVALUATION,
                 belief: float = BELIEF, prune: float = PRUNE,
                 opp_bias: float | None = OPP_BIAS, opp_priors: str = OPP_PRIORS,
                 opp_model_turns: int | None = None,
                 opp_model_threshold: float | None = None,
                 opp_detector: str = OPP_DETECTOR, priors: str = PRIORS,
                 weights: Sequence[float] | None = None) -> None:
        if priors not in PRIOR_SOURCES:
            raise ValueError(f"unknown priors {priors!r}; known: {', '.join(PRIOR_SOURCES)}")
        #: The seat's own priors on a board.
        self.own_priors = expert_priors if priors == "expert" else greedy_priors
        if playout not in (*PLAYOUTS, "expert"):
            raise ValueError(f"unknown playout {playout!r}; known: {', '.join(PLAYOUTS)}, "
                             "expert")
        if "expert" in (priors, playout) and expert_weights() is None:
            raise ValueError("priors or playout 'expert' needs fitted weights "
                             "(scripts/fit_expert.py)")
        if evaluation not in EVALUATIONS:
            raise ValueError(f"unknown evaluation {evaluation!r}; known: {', '.join(EVALUATIONS)}")
        if opp_priors not in OPP_PRIOR_SOURCES:
            raise ValueError(f"unknown opp_priors {opp_priors!r}; known: "
                             f"{', '.join(OPP_PRIOR_SOURCES)}")
        if opp_bias is None:
            opp_bias = bias
        self.evaluate, own_scale = EVALUATIONS[evaluation]
        if weights is not None:
            if evaluation == "cards":
                raise ValueError("weights are for the learned evaluations, not 'cards'")
            degree_of(weights)
            self.evaluate = functools.partial(self.evaluate, weights=tuple(weights))
        if reward_scale is None:
            reward_scale = own_scale
        if (exploration < 0 or bias < 0 or not reward_scale > 0 or horizon < 1
                or not 0.0 <= belief <= 1.0 or prune < 0 or opp_bias < 0):
            raise ValueError("exploration, bias, opp_bias and prune must be >= 0, reward_scale > 0, "
                             "horizon >= 1, belief in [0, 1]")
        self.rng = random.Random(seed)
        self.exploration = exploration
        self.bias = bias
        self.opp_bias = opp_bias
        self.world_priors = opp_priors == "world"
        #: With ``opp_priors`` ``forced``: the opponent plays greedy's choice in the tree
        #: while the model says greedy (updated at each turn's first decision).
        self.forced = False
        self._forcing = opp_priors == "forced"
        #: With ``opp_priors`` ``model`` or ``forced``: what the opponent's stacked cards
        #: say, and the seat's previous view (the last of its previous turn, at a turn's first).
        if opp_model_turns is None:
            opp_model_turns = OPP_MODEL_TURNS
        if opp_model_threshold is None:
            opp_model_threshold = OPP_MODEL_THRESHOLD
        if opp_detector not in OPP_DETECTORS:
            raise ValueError(f"unknown opp_detector {opp_detector!r}; known: "
                             f"{', '.join(OPP_DETECTORS)}")
        self._model: OpponentModel | RankLikelihood | None = None
        if opp_priors in ("model", "forced"):
            self._model = (OpponentModel(opp_model_threshold, opp_model_turns)
                           if opp_detector == "mean" else RankLikelihood())
        #: Searched decisions made while the model took the opponent for greedy.
        self.forced_searched = 0
        self._previous: View | None = None
        self.prior_order = prior_order
        self.horizon = horizon
        self.playout = PLAYOUTS.get(playout, PLAYOUTS["greedy"])
        self._expert_playout = playout == "expert"
        self._greedy_playout = playout == "greedy"
        self.reward_scale = reward_scale
        self.reuse = reuse
        self.widen = widen
        self.center = center
        self.crn = crn
        self.belief = belief
        self.prune = prune
        #: Worlds, reward sum and sum of squares of each root move in this decision
        #: (for pruning; a kept subtree's earlier visits are not in them).
        self._race_stats: dict[int, list[float]] = {}
        #: The turn the belief was read at, and its weights (None: uniform deals).
        self._belief_turn: int | None = None
        self._weights: list[float] | None = None
        self._score_sum, self._score_count = 0.0, 0
        #: Statistics of the last decision (0 iterations: one distinct move, or
        #: a budget spent before the first), and totals over searched decisions.
        self.last_iterations = 0
        self.last_reused = 0
        self.searched = 0
        self.total_iterations = 0
        self._kept: Node | None = None
        self._expected: tuple[bool, tuple[Any, ...]] | None = None

    # ------------------------------------------------------------ decision

    def choose(self, game: str, seat: int, view: View, legal: Sequence[Intent],
               budget: Budget = DEFAULT_BUDGET) -> Intent:
        """The most visited root move after the iterations ``budget`` allows
        (default: ``engine.bots.base.DEFAULT_BUDGET``, a fixed iteration count).

        Raises:
            ValueError: ``legal`` is empty, or the view is not ``seat``'s view.
        """
        require_legal(legal)
        if game == "war":
            return flip_intent(legal)
        if view["turn"] != self._belief_turn:   # the turn's first decision
            self._belief_turn = view["turn"]
            self._weights = kept_weights(view, seat) if self.belief else None
            if self._model is not None:
                previous = self._previous
                if previous is not None and previous["turn"] == view["turn"] - 2:
                    self._model.observe(previous, view, seat)
                if self._forcing:
                    self.forced = self._model.greedy_like()
                else:
                    self.world_priors = self._model.greedy_like()
        self._previous = view
        board = board_from_view(view, seat)
        values = [from_wire(intent) for intent in legal]
        moves = distinct_moves(values, board.hand)
        root = self._root(view)
        self.last_iterations = 0
        self.last_reused = root.visits
        if len(moves) == 1:
            self._remember(root, next(iter(moves)), view, seat)
            return legal[values.index(next(iter(moves.values())))]
        stop = view["turn"] + self.horizon
        self._score_sum, self._score_count = 0.0, 0
        keys = list(moves)
        active = keys
        self._race_stats = {key: [0, 0.0, 0.0] for key in keys}
        priors = self.own_priors(board, moves) if self.crn else {}
        done = 0
        cost = 0.0
        left = budget.remaining()
        reserve = None if left is None else left * (1.0 - BUDGET_SHARE)
        while budget.max_iterations is None or done < budget.max_iterations:
            if left is not None:
                assert reserve is not None
                if left <= 0.0 or left - cost < reserve:
                    break  # the next iteration would end past the share of the time
            if self.crn:
                self._iterate_all(root, view, seat, stop, active, priors)
            else:
                self._iterate(root, view, seat, stop)
            done += 1
            if (self.crn and self.prune and len(active) > 2 and done >= PRUNE_AFTER
                    and (done - PRUNE_AFTER) % PRUNE_EVERY == 0):
                active = self._race(active)
            if left is not None:
                now = budget.remaining()
                assert now is not None
                cost, left = left - now, now
        self.last_iterations = done
        self.searched += 1
        self.forced_searched += self.forced or (self._model is not None and self.world_priors)
        self.total_iterations += done
        # Only the moves still racing saw every world (a pruned move's rewards were
        # centred on a mean that still counted the worse moves).
        key = root.best_mean(active) if self.crn else root.most_visited(keys)
        if key is None:  # not one iteration: the heuristic's choice
            key = move_key(choose_on_board(board, values, self.rng), board.hand)
        self._remember(root, key, view, seat)
        return legal[values.index(moves[key])]

    def _iterate(self, root: Node, view: View, seat: int, stop: int) -> None:
        """One ISMCTS iteration (module docstring, steps 1-5)."""
        state = self._world(view, seat)
        path = self._descend(root, state, root, stop, seat)
        reward = self._reward(self._play_on(state, seat, stop), seat)
        root.visits += 1
        for n in path:
            n.update(reward, seat)

    def _iterate_all(self, root: Node, view: View, seat: int, stop: int,
                     keys: Sequence[int], priors: dict[int, float]) -> None:
        """One iteration with common random numbers at the root: one world, and in it
        every root move followed down its subtree and played out; each reward is the
        move's score against the mean of all of them in this world."""
        world = self._world(view, seat)
        here = distinct_moves(world.legal_moves(seat), [VALUE[c] for c in world.hands[seat]])
        played = []
        for key in keys:
            child = root.children.get(key) or root.add_child(key, seat, priors[key])
            state = world.clone()
            state.apply_move(seat, here[key])
            path = [child, *self._descend(child, state, None, stop, seat)]
            played.append((path, self._play_on(state, seat, stop)))
        score = self.evaluate
        scores = [score(state, seat) for _, state in played]
        running = [x for (_, state), x in zip(played, scores, strict=True)
                   if state.result is None]
        mean = sum(running) / len(running) if running else 0.0
        scale = self.reward_scale
        root.visits += 1
        race = self._race_stats
        for (path, state), x in zip(played, scores, strict=True):
            reward = reward_of(x if state.result is not None else x - mean, scale)
            stat = race[path[0].key]  # type: ignore[index]
            stat[0] += 1
            stat[1] += reward
            stat[2] += reward * reward
            for n in path:
                n.update(reward, seat)

    def _race(self, active: list[int]) -> list[int]:
        """The root moves of ``active`` still worth new worlds: those whose mean reward
        is within :attr:`prune` standard errors of the best (at least two kept)."""
        stats = []
        for key in active:
            n, total, squares = self._race_stats[key]
            mean = total / n
            var = max(squares / n - mean * mean, 0.0)
            stats.append((mean, var / n, key))
        stats.sort(reverse=True)
        best_mean, best_se2, _ = stats[0]
        z = self.prune
        kept = [key for mean, se2, key in stats
                if best_mean - mean <= z * math.sqrt(best_se2 + se2)]
        if len(kept) < 2:
            kept = [stats[0][2], stats[1][2]]
        return [k for k in active if k in kept]

    def _world(self, view: View, seat: int) -> Any:
        """A new determinization of ``view``, its opponent hand dealt by the belief."""
        world = determinize(view, seat, self.rng)
        if self._weights is not None:
            resample_hand(world, seat, self._weights, self.belief, self.rng)
        return world

    def _descend(self, node: Node, state: Any, full_width: Node | None,
                 stop: int, observer: int) -> list[Node]:
        """Select and expand from ``node`` in the world ``state`` (applying the moves
        to it), never past the horizon (turn ``stop``); returns the nodes entered.
        ``full_width`` is exempt from widening; the opponent of ``observer`` selects
        with :attr:`opp_bias` (and, with ``opp_priors`` ``world``, this world's priors)."""
        path: list[Node] = []
        widen = self.widen
        while state.result is None and state.turn < stop:
            mover = state.current
            hand = [VALUE[c] for c in state.hands[mover]]
            moves = distinct_moves(state.legal_moves(mover), hand)
            if self.forced and mover != observer and len(moves) > 1:
                pick = choose_on_board(board_from_state(state, mover), list(moves.values()),
                                       self.rng)
                key = move_key(pick, hand)
                moves = {key: moves[key]}
            untried = node.untried(moves)
            if untried and (node is full_width or not widen
                            or len(moves) - len(untried) < 1 + math.isqrt(node.visits // widen)):
                key, prior = self._pick_untried(state, mover, moves, untried,
                                                mover == observer)
                state.apply_move(mover, moves[key])
                node = node.add_child(key, mover, prior)
                path.append(node)
                break
            tried = node.tried(moves)
            if mover == observer:
                node = node.select(tried, self.exploration, self.bias)
            elif self.world_priors and len(tried) > 1:
                priors = greedy_priors(board_from_state(state, mover), moves)
                node = node.select(tried, self.exploration, self.opp_bias, priors)
            else:
                node = node.select(tried, self.exploration, self.opp_bias)
            state.apply_move(mover, moves[node.key])
            path.append(node)
        return path

    def _pick_untried(self, state: Any, mover: int, moves: dict[int, DSIntent],
                      untried: list[int], own: bool = True) -> tuple[int, float]:
        """The untried move to expand and its prior (``own``: the observer's move,
        by :attr:`own_priors`; else greedy's)."""
        if not (self.prior_order or self.bias):
            return untried[self.rng.randrange(len(untried))], 0.0
        prior_of = self.own_priors if own else greedy_priors
        priors = prior_of(board_from_state(state, mover), moves)
        if not self.prior_order:
            key = untried[self.rng.randrange(len(untried))]
            return key, priors[key]
        top = max(priors[k] for k in untried)
        best = [k for k in untried if priors[k] >= top - 1e-9]
        key = best[0] if len(best) == 1 else best[self.rng.randrange(len(best))]
        return key, priors[key]

    def _play_on(self, state: Any, seat: int, stop: int) -> Any:
        """Play both seats on with the playout policy to the horizon (in place)."""
        policy, rng = self.playout, self.rng
        if self._greedy_playout:
            greedy_play_out(state, stop, rng)
            return state
        expert = self._expert_playout

        def choose(state: Any, mover: int, legal: list[DSIntent]) -> DSIntent:
            if len(legal) == 1:
                return legal[0]
            if expert and mover == seat:
                return expert_choice(state, mover, legal, rng)
            return policy(state, mover, legal, rng)

        play_out(state, choose, until=lambda s: s.turn >= stop, values=True)
        return state

    def _reward(self, state: Any, seat: int) -> float:
        """``seat``'s reward in [0, 1] for the played-out ``state`` (module docstring)."""
        score = self.evaluate(state, seat)
        if state.result is not None or not self.center:
            return reward_of(score, self.reward_scale)
        # Centre on the mean score of this decision so far: the reward keeps its
        # resolution when one seat is far ahead.
        self._score_sum += score
        self._score_count += 1
        return reward_of(score - self._score_sum / self._score_count, self.reward_scale)

    # ------------------------------------------------------------ reuse

    def _root(self, view: View) -> Node:
        """The kept subtree when ``view`` is what its move was predicted to show,
        else a fresh root."""
        kept, expected = self._kept, self._expected
        self._kept = self._expected = None
        if kept is not None and expected is not None:
            exact, signature = expected
            if _signature(view, exact) == signature:
                return kept.detach()
        return Node()

    def _remember(self, root: Node, key: int, view: View, seat: int) -> None:
        """With ``reuse``: keep the chosen child when the seat moves again this turn,
        with the signature its next view must show."""
        self._kept = self._expected = None
        if not self.reuse:
            return
        child = root.children.get(key)
        if child is None:
            return
        world = determinize(view, seat, self.rng)
        before = len(world.deck) + len(world.discard)
        hand = [VALUE[c] for c in world.hands[seat]]
        world.apply_move(seat, distinct_moves(world.legal_moves(seat), hand)[key])
        if world.result is not None or world.current != seat:
            return
        drew = len(world.deck) + len(world.discard) != before
        self._kept = child
        self._expected = (not drew, _signature(world.view(seat), not drew))
