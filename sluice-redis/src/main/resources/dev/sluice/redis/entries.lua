-- One item decided, either way an algorithm decides: the state-table way (evaluate_state,
-- settle_state, report_state) and, for an item of a request of several, its entry (evaluate_entry,
-- settle_entry, report_entry). requests.lua decides requests with them.

-- Algorithms decide in one of two ways. Those whose whole value is read in one command (token
-- bucket, a small rule's sliding log) give each item a function it.decide(value, now, undo),
-- which returns the reason, the time decided at, whether the value was current state, and on an
-- admission the value to write and its TTL; their report(it, value, t, reason, numbers, at) then
-- reads the report from the value as decided. The others load a state table, evaluate it and
-- commit it (see items.lua). Either way one function decides, for a request of one item or of
-- many.

-- Records the time of a decision that consumed nothing, on explicit times (replay, tests), as
-- the memory store does, so that an earlier time given later counts as this one. On the
-- server's clock such a decision writes nothing: a later decision at an earlier time (a replica
-- promoted with a late clock) is still no earlier than the last commit, which is all the state
-- needs.
local function record_time(call, key, it, raw, t, present)
  if not present then
    write_value(call, key, it.algorithm.created(it, t), ttl_px(it, 0))
  elseif t > struct.unpack('<i8', raw, 5) then
    store_last(call, key, t)
  end
end

-- The state-table way: loads and evaluates the item.
local function evaluate_state(call, key, it, spare)
  local algorithm = it.algorithm
  if spare and spare.kind ~= algorithm.kind then
    spare = nil
  end
  local state = carry_state(call, key, it, spare, algorithm.load(call, key, it, spare))
  -- Time never goes backwards for one key (explicit times; a promoted replica's clock).
  local t = call.now
  if state.present and state.last > t then
    t = state.last
  end
  state.t = t
  local over = it.over
  if over then
    for j = 1, #over do
      exceed(state, over[j], -1, REASON_COST)
    end
  else
    algorithm.evaluate(state, it, t)
  end
  return state
end

local function settle_state(call, state, it, commit, undo)
  state.committed = commit
  if commit then
    it.algorithm.commit(call, state, it, state.t, undo)
  elseif state.saved then
    return -- put back after the report, which may read the converted value's slots (put_back)
  elseif call.explicit then
    if not state.present then
      it.algorithm.create(call, state, it, state.t)
    elseif state.t > state.last then
      it.algorithm.touch(call, state, it, state.t)
    end
  end
end

local function report_state(call, state, it)
  local numbers, at = call.numbers, call.last_number
  numbers[at + 1] = state.reason
  numbers[at + 2] = state.fits and state.start and (state.start - state.t) or 0
  call.last_number = it.algorithm.report(state, it, state.t, numbers, at + 2)
end

-- One item of a request of several, evaluated: what settle_entry and report_entry take.
local function evaluate_entry(call, key, it, undo)
  local algorithm = it.algorithm
  if not it.decide then
    local state = evaluate_state(call, key, it, nil)
    return {it = it, key = key, state = state, fits = state.fits}
  end
  local raw, saved, reason, t, present, value, px = carry_decide(call, key, it, read_value(call, key), undo)
  return {
    it = it, key = key, state = false, fits = reason == REASON_NONE, reason = reason, t = t,
    raw = raw, present = present, value = value, px = px, committed = false, saved = saved,
  }
end

local function settle_entry(call, entry, commit, undo)
  local it = entry.it
  if entry.state then
    settle_state(call, entry.state, it, commit, undo)
  elseif commit then
    write_value(call, entry.key, entry.value, entry.px)
    entry.committed = true
  elseif entry.saved then
    return -- put back after the report (put_back)
  elseif call.explicit then
    record_time(call, entry.key, it, entry.raw, entry.t, entry.present)
  end
end

local function report_entry(call, entry)
  if entry.state then
    report_state(call, entry.state, entry.it)
    return
  end
  if entry.banned then
    report_banned(call, entry)
    return
  end
  local numbers, at = call.numbers, call.last_number
  numbers[at + 1], numbers[at + 2] = entry.reason, 0
  local value = entry.committed and entry.value or entry.raw
  call.last_number = entry.it.algorithm.report(entry.it, value, entry.t, entry.reason, numbers, at + 2)
end
