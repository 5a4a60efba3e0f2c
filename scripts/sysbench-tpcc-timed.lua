#!/usr/bin/env sysbench
-- Per-transaction-type timing for Percona-Lab's sysbench-tpcc, which is not
-- part of this project (https://github.com/Percona-Lab/sysbench-tpcc; get it
-- with `git clone https://github.com/Percona-Lab/sysbench-tpcc` and point
-- SYSBENCH_TPCC_DIR at the clone). Run this file in place of its tpcc.lua,
-- with the same options:
--
--   SYSBENCH_TPCC_DIR=/tmp/sysbench-tpcc sysbench scripts/sysbench-tpcc-timed.lua \
--     --db-driver=mysql --mysql-host=127.0.0.1 ... --tables=1 --scale=4 run
--
-- It loads tpcc.lua unchanged (so prepare, run, check and cleanup are
-- sysbench-tpcc's own) and replaces the five transaction functions
-- tpcc.lua's event() picks from (new_order, payment, orderstatus, delivery,
-- stocklevel; purge too when enabled) by wrappers that time each attempt
-- with CLOCK_MONOTONIC. Each worker thread keeps its own totals and prints
-- them from thread_done as lines that scripts/bench-sysbench-tpcc.sh sums:
--
--   SBTPCC_TYPE <name> <ok> <ok_us> <failed> <failed_us> <rollbacks> <hist>
--   SBTPCC_ERR <errno> <count> <first failing statement, on one line>
--
-- ok: attempts that returned (for new_order, including the 1% the script
-- rolls back on purpose for an unused item; those are also counted in
-- rollbacks, and both count as completed New-Orders, as TPC-C's tpmC does);
-- ok_us: their summed latency in microseconds; failed / failed_us: attempts
-- ended by an error sysbench retries (deadlock, lock wait timeout, lost
-- connection: sysbench then runs event() again, which draws a new type);
-- hist: ok latencies as bucket:count pairs, bucket b holding latencies in
-- [1.05^b, 1.05^(b+1)) microseconds (for percentiles).

local ffi = require("ffi")

local dir = os.getenv("SYSBENCH_TPCC_DIR")
if dir == nil or dir == "" then
   error("SYSBENCH_TPCC_DIR must name a clone of " ..
            "https://github.com/Percona-Lab/sysbench-tpcc")
end
package.path = dir .. "/?.lua;" .. package.path

-- tpcc.lua starts with a #! line, which loadfile skips.
local chunk, lerr = loadfile(dir .. "/tpcc.lua")
if chunk == nil then error("loading " .. dir .. "/tpcc.lua: " .. lerr) end
chunk()

ffi.cdef [[
typedef struct { long sec; long nsec; } sbtpcc_timespec;
int clock_gettime(int clock_id, sbtpcc_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local ts = ffi.new("sbtpcc_timespec")

local function now_us()
   ffi.C.clock_gettime(CLOCK_MONOTONIC, ts)
   return tonumber(ts.sec) * 1e6 + tonumber(ts.nsec) / 1e3
end

local LOG_STEP = math.log(1.05)

-- Per-thread state (each sysbench thread runs its own Lua state).
local stats = {}        -- name -> {ok, ok_us, failed, failed_us, rollbacks, hist}
local errs = {}         -- errno -> {count, query}
local rolled_back = false

local function type_stats(name)
   local s = stats[name]
   if s == nil then
      s = {ok = 0, ok_us = 0, failed = 0, failed_us = 0, rollbacks = 0, hist = {}}
      stats[name] = s
   end
   return s
end

local function one_line(q)
   return (tostring(q):gsub("%s+", " "):sub(1, 400))
end

local function timed(name, fn)
   return function(...)
      local s = type_stats(name)
      rolled_back = false
      local t0 = now_us()
      local ok, err = pcall(fn, ...)
      local dt = now_us() - t0
      if not ok then
         s.failed = s.failed + 1
         s.failed_us = s.failed_us + dt
         if type(err) == "table" then
            local key = tostring(err.sql_errno or "?")
            local e = errs[key]
            if e == nil then
               e = {count = 0, query = one_line(err.query or "")}
               errs[key] = e
            end
            e.count = e.count + 1
         end
         error(err, 0) -- sysbench's thread_run decides: restart or abort
      end
      s.ok = s.ok + 1
      s.ok_us = s.ok_us + dt
      if rolled_back then s.rollbacks = s.rollbacks + 1 end
      local b = dt >= 1 and math.floor(math.log(dt) / LOG_STEP) or 0
      s.hist[b] = (s.hist[b] or 0) + 1
   end
end

-- tpcc.lua's event() calls _G[name](); replace the functions it names.
for _, name in ipairs({"new_order", "payment", "orderstatus", "delivery",
                       "stocklevel", "purge"}) do
   if type(_G[name]) == "function" then
      _G[name] = timed(name, _G[name])
   end
end

-- The transactions use the global `con`; put a thin proxy in its place that
-- notes an explicit ROLLBACK (New-Order's intended 1%).
local function proxy(real)
   return setmetatable({}, {
      __index = function(t, k)
         local v = real[k]
         if type(v) ~= "function" then return v end
         local f
         if k == "query" then
            f = function(_, q, ...)
               if q == "ROLLBACK" then rolled_back = true end
               return v(real, q, ...)
            end
         else
            f = function(_, ...) return v(real, ...) end
         end
         rawset(t, k, f)
         return f
      end
   })
end

local base_thread_init = thread_init
function thread_init(...)
   base_thread_init(...)
   con = proxy(con)
end

local base_thread_done = thread_done
function thread_done(...)
   if sysbench.cmdline.command == "run" then
      local lines = {}
      for name, s in pairs(stats) do
         local h = {}
         for b, n in pairs(s.hist) do h[#h + 1] = b .. ":" .. n end
         lines[#lines + 1] = string.format("SBTPCC_TYPE %s %d %.0f %d %.0f %d %s",
            name, s.ok, s.ok_us, s.failed, s.failed_us, s.rollbacks,
            #h > 0 and table.concat(h, ",") or "-")
      end
      for errno, e in pairs(errs) do
         lines[#lines + 1] = string.format("SBTPCC_ERR %s %d %s", errno, e.count, e.query)
      end
      -- one write, so that threads' lines do not interleave
      io.stdout:write(table.concat(lines, "\n") .. "\n")
      io.stdout:flush()
   end
   base_thread_done(...)
end
