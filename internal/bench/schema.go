package bench

// The nine tables of Clause 1.3 with the usual primary keys and the two
// secondary indexes drivers rely on (customer by last name, orders by
// customer). No foreign keys: lockstep does not support them yet. HISTORY has
// no primary key in the specification; InnoDB (and lockstep) give it a hidden
// one. The DDL is InnoDB's and runs unchanged on lockstep and MariaDB.
var tableNames = []string{
	"warehouse", "district", "customer", "history", "new_order",
	"orders", "order_line", "item", "stock",
}

var schemaDDL = []string{
	`CREATE TABLE warehouse (
  w_id SMALLINT UNSIGNED NOT NULL,
  w_name VARCHAR(10) NOT NULL,
  w_street_1 VARCHAR(20) NOT NULL,
  w_street_2 VARCHAR(20) NOT NULL,
  w_city VARCHAR(20) NOT NULL,
  w_state CHAR(2) NOT NULL,
  w_zip CHAR(9) NOT NULL,
  w_tax DECIMAL(4,4) NOT NULL,
  w_ytd DECIMAL(12,2) NOT NULL,
  PRIMARY KEY (w_id)
) ENGINE=InnoDB`,
	`CREATE TABLE district (
  d_id TINYINT UNSIGNED NOT NULL,
  d_w_id SMALLINT UNSIGNED NOT NULL,
  d_name VARCHAR(10) NOT NULL,
  d_street_1 VARCHAR(20) NOT NULL,
  d_street_2 VARCHAR(20) NOT NULL,
  d_city VARCHAR(20) NOT NULL,
  d_state CHAR(2) NOT NULL,
  d_zip CHAR(9) NOT NULL,
  d_tax DECIMAL(4,4) NOT NULL,
  d_ytd DECIMAL(12,2) NOT NULL,
  d_next_o_id INT UNSIGNED NOT NULL,
  PRIMARY KEY (d_w_id, d_id)
) ENGINE=InnoDB`,
	`CREATE TABLE customer (
  c_id INT UNSIGNED NOT NULL,
  c_d_id TINYINT UNSIGNED NOT NULL,
  c_w_id SMALLINT UNSIGNED NOT NULL,
  c_first VARCHAR(16) NOT NULL,
  c_middle CHAR(2) NOT NULL,
  c_last VARCHAR(16) NOT NULL,
  c_street_1 VARCHAR(20) NOT NULL,
  c_street_2 VARCHAR(20) NOT NULL,
  c_city VARCHAR(20) NOT NULL,
  c_state CHAR(2) NOT NULL,
  c_zip CHAR(9) NOT NULL,
  c_phone CHAR(16) NOT NULL,
  c_since DATETIME NOT NULL,
  c_credit CHAR(2) NOT NULL,
  c_credit_lim DECIMAL(12,2) NOT NULL,
  c_discount DECIMAL(4,4) NOT NULL,
  c_balance DECIMAL(12,2) NOT NULL,
  c_ytd_payment DECIMAL(12,2) NOT NULL,
  c_payment_cnt SMALLINT UNSIGNED NOT NULL,
  c_delivery_cnt SMALLINT UNSIGNED NOT NULL,
  c_data VARCHAR(500) NOT NULL,
  PRIMARY KEY (c_w_id, c_d_id, c_id),
  KEY idx_customer_name (c_w_id, c_d_id, c_last, c_first)
) ENGINE=InnoDB`,
	`CREATE TABLE history (
  h_c_id INT UNSIGNED NOT NULL,
  h_c_d_id TINYINT UNSIGNED NOT NULL,
  h_c_w_id SMALLINT UNSIGNED NOT NULL,
  h_d_id TINYINT UNSIGNED NOT NULL,
  h_w_id SMALLINT UNSIGNED NOT NULL,
  h_date DATETIME NOT NULL,
  h_amount DECIMAL(6,2) NOT NULL,
  h_data VARCHAR(24) NOT NULL
) ENGINE=InnoDB`,
	`CREATE TABLE new_order (
  no_o_id INT UNSIGNED NOT NULL,
  no_d_id TINYINT UNSIGNED NOT NULL,
  no_w_id SMALLINT UNSIGNED NOT NULL,
  PRIMARY KEY (no_w_id, no_d_id, no_o_id)
) ENGINE=InnoDB`,
	`CREATE TABLE orders (
  o_id INT UNSIGNED NOT NULL,
  o_d_id TINYINT UNSIGNED NOT NULL,
  o_w_id SMALLINT UNSIGNED NOT NULL,
  o_c_id INT UNSIGNED NOT NULL,
  o_entry_d DATETIME NOT NULL,
  o_carrier_id TINYINT UNSIGNED NULL,
  o_ol_cnt TINYINT UNSIGNED NOT NULL,
  o_all_local TINYINT UNSIGNED NOT NULL,
  PRIMARY KEY (o_w_id, o_d_id, o_id),
  KEY idx_orders_customer (o_w_id, o_d_id, o_c_id, o_id)
) ENGINE=InnoDB`,
	`CREATE TABLE order_line (
  ol_o_id INT UNSIGNED NOT NULL,
  ol_d_id TINYINT UNSIGNED NOT NULL,
  ol_w_id SMALLINT UNSIGNED NOT NULL,
  ol_number TINYINT UNSIGNED NOT NULL,
  ol_i_id INT UNSIGNED NOT NULL,
  ol_supply_w_id SMALLINT UNSIGNED NOT NULL,
  ol_delivery_d DATETIME NULL,
  ol_quantity TINYINT UNSIGNED NOT NULL,
  ol_amount DECIMAL(6,2) NOT NULL,
  ol_dist_info CHAR(24) NOT NULL,
  PRIMARY KEY (ol_w_id, ol_d_id, ol_o_id, ol_number)
) ENGINE=InnoDB`,
	`CREATE TABLE item (
  i_id INT UNSIGNED NOT NULL,
  i_im_id INT UNSIGNED NOT NULL,
  i_name VARCHAR(24) NOT NULL,
  i_price DECIMAL(5,2) NOT NULL,
  i_data VARCHAR(50) NOT NULL,
  PRIMARY KEY (i_id)
) ENGINE=InnoDB`,
	`CREATE TABLE stock (
  s_i_id INT UNSIGNED NOT NULL,
  s_w_id SMALLINT UNSIGNED NOT NULL,
  s_quantity SMALLINT NOT NULL,
  s_dist_01 CHAR(24) NOT NULL,
  s_dist_02 CHAR(24) NOT NULL,
  s_dist_03 CHAR(24) NOT NULL,
  s_dist_04 CHAR(24) NOT NULL,
  s_dist_05 CHAR(24) NOT NULL,
  s_dist_06 CHAR(24) NOT NULL,
  s_dist_07 CHAR(24) NOT NULL,
  s_dist_08 CHAR(24) NOT NULL,
  s_dist_09 CHAR(24) NOT NULL,
  s_dist_10 CHAR(24) NOT NULL,
  s_ytd INT UNSIGNED NOT NULL,
  s_order_cnt SMALLINT UNSIGNED NOT NULL,
  s_remote_cnt SMALLINT UNSIGNED NOT NULL,
  s_data VARCHAR(50) NOT NULL,
  PRIMARY KEY (s_w_id, s_i_id)
) ENGINE=InnoDB`,
}
