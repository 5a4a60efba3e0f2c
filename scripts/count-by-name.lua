-- sysbench script for scripts/bench-count-by-name.sh: the statement
-- Percona-Lab's sysbench-tpcc sends in Payment and Order-Status before it
-- reads customers by last name, as a text query, for a random district and
-- a random TPC-C last name (Clause 4.3.2.3's syllables).
sysbench.cmdline.options = {
   warehouses = {"Warehouses loaded", 1},
}

local syllables = {"BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING"}

local function lastname(n)
   return syllables[math.floor(n / 100) % 10 + 1] .. syllables[math.floor(n / 10) % 10 + 1] .. syllables[n % 10 + 1]
end

function thread_init()
   drv = sysbench.sql.driver()
   con = drv:connect()
end

function thread_done()
   con:disconnect()
end

function event()
   local w = sysbench.rand.uniform(1, sysbench.opt.warehouses)
   local d = sysbench.rand.uniform(1, 10)
   local n = sysbench.rand.uniform(0, 999)
   con:query(string.format("SELECT count(c_id) namecnt FROM customer WHERE c_w_id = %d AND c_d_id= %d AND c_last='%s'",
      w, d, lastname(n)))
end
