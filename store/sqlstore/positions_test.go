package sqlstore
