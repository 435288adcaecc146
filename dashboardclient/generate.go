package dashboardclient

//go:generate go run github.com/Khan/genqlient
