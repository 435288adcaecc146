-- 0010: a sale keeps the operator and the salesperson its point of sale sent
-- (sale.store.employeeId and sellerId).
ALTER TABLE `sales` ADD COLUMN `employee_id` text NOT NULL DEFAULT ('');
ALTER TABLE `sales` ADD COLUMN `seller_id` text NOT NULL DEFAULT ('');
